// `podsim sweep --slurm`: a study as a Slurm job array, one shard per array task.
#pragma once

#include <string>

namespace podsim::driver {

struct SlurmSubmission {
  std::string study_file, out, partition;
  int shards = 4;
  bool dry_run = false;  // write DIR/sweep.sbatch but do not submit it
};

struct SlurmSubmitted {
  std::string script;  // absolute path of DIR/sweep.sbatch
  std::string out;     // absolute results directory, what `podsim merge` is given
  std::string job_id;  // empty for a dry run
  int shards = 0;
};

// Writes DIR/sweep.sbatch and, unless dry_run, submits it with sbatch (InputError when sbatch fails).
SlurmSubmitted submit_slurm_sweep(const SlurmSubmission& job);

}  // namespace podsim::driver
