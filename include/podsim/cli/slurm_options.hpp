// --slurm, --slurm-shards, --partition and --dry-run, shared by `podsim sweep` and `podsim plan`
// (driver/slurm_submit.hpp): one job-array submission, so one set of words for it.
#pragma once

#include <string>

#include "podsim/driver/slurm_submit.hpp"

namespace CLI {
class App;
}

namespace podsim::cli {

// `what` is what the array runs ("study", "search"); `script` the sbatch file --dry-run leaves.
void add_slurm_options(CLI::App& cmd, bool& slurm, driver::SlurmSubmission& job, const std::string& what,
                       const std::string& script);

}  // namespace podsim::cli
