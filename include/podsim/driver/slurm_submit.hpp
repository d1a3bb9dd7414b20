// `podsim sweep --slurm` and `podsim plan --slurm`: a job array, one shard per array task.
#pragma once

#include <string>

namespace podsim::driver {

struct SlurmSubmission {
  std::string study_file, out, partition;  // study_file: sweeps only
  int shards = 4;
  bool dry_run = false;  // write the sbatch script into DIR but do not submit it
};

struct SlurmSubmitted {
  std::string script;  // absolute path of DIR/sweep.sbatch (or plan.sbatch)
  std::string out;     // absolute results directory, what `podsim merge` is given
  std::string job_id;  // empty for a dry run
  int shards = 0;
};

// Writes DIR/sweep.sbatch and, unless dry_run, submits it with sbatch (InputError when sbatch fails).
SlurmSubmitted submit_slurm_sweep(const SlurmSubmission& job);

// The job array behind both: writes DIR/<name>.sbatch whose tasks run `podsim <arguments>` (already
// shell-quoted) followed by --shard "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT" and --jobs from the
// task's CPUs, and submits it unless dry_run.
SlurmSubmitted submit_slurm_array(const SlurmSubmission& job, const std::string& name,
                                  const std::string& arguments);

// `text` in single quotes for a POSIX shell (a quote inside becomes '\'').
std::string shell_quote(const std::string& text);
// `text` as one shell word: as it is when it holds only characters no POSIX shell treats specially
// (letters, digits and _ . / = : , + - @ %), shell_quote(text) otherwise. For commands a person reads.
std::string shell_word(const std::string& text);

}  // namespace podsim::driver
