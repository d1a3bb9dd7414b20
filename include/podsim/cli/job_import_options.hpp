// --hf-config and --megatron-args, shared by `podsim run` and `podsim plan` (driver/job_import.hpp).
#pragma once

#include <string>
#include <vector>

#include "podsim/driver/job_import.hpp"

namespace CLI {
class App;
}

namespace podsim::cli {

void add_job_import_options(CLI::App& cmd, driver::JobSources& sources);

// Imports the sources into `workload_file` / `sets` (workloads/base-llm.yaml when no --workload) and
// prints their warnings and notes on stderr (warnings even with --quiet). InputError when neither a
// workload nor a source is given.
void apply_job_import(const driver::JobSources& sources, std::string& workload_file,
                      std::vector<std::string>& sets, bool quiet);

}  // namespace podsim::cli
