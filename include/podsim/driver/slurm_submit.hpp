// `podsim sweep --slurm`: a study as a Slurm job array, one shard per array task.
#pragma once

#include <string>

namespace podsim::cli {

struct SlurmSubmission {
  std::string study_file, out, partition;
  int shards = 4;
  bool dry_run = false;  // write DIR/sweep.sbatch but do not submit it
};

// Writes DIR/sweep.sbatch and submits it with sbatch (InputError when sbatch fails); prints what to do next.
void submit_slurm_sweep(const SlurmSubmission& job);

}  // namespace podsim::cli
