#include "podsim/cli/slurm_options.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>

namespace podsim::cli {

void add_slurm_options(CLI::App& cmd, bool& slurm, driver::SlurmSubmission& job, const std::string& what,
                       const std::string& script) {
  cmd.add_flag(
      "--slurm", slurm,
      fmt::format("Submit the {} as a Slurm job array (one shard per task), then 'podsim merge DIR'", what));
  cmd.add_option("--slurm-shards", job.shards, "Array tasks for --slurm (default 4)");
  cmd.add_option("--partition", job.partition, "Slurm partition for --slurm");
  cmd.add_flag("--dry-run", job.dry_run, fmt::format("With --slurm: write {} but do not submit it", script));
}

}  // namespace podsim::cli
