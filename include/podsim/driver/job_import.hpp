// Bringing a job as people already describe it: a HuggingFace model config (hf_config.hpp) or a
// Megatron-LM / NeMo launch command line (megatron_args.hpp) becomes `--set workload.*` overrides, applied
// after the workload file and before the user's own --set (so those still win).
#pragma once

#include <string>
#include <vector>

namespace podsim::driver {

struct JobImport {
  std::vector<std::string> sets;      // "workload.model.layers=32", in the order they apply
  std::vector<std::string> warnings;  // what podsim cannot represent, or did not understand
  std::vector<std::string> notes;     // what was read, and what is left to the workload file
};

struct JobSources {
  std::string hf_config;      // path of a config.json; "" = none
  std::string megatron_args;  // the command line itself, or @FILE; "" = none
};

// Reads the sources (HF config first, then the Megatron arguments, whose values win where both state a
// key: a warning names each disagreement) and puts their overrides before `sets`. An empty
// `workload_file` becomes `base_workload` (a note says so), which needs the sources to state the model
// shape (model.layers, hidden, heads): otherwise InputError. Returns the warnings and notes to print, each
// line prefixed "warning: " or "note: ".
std::vector<std::string> import_job(const JobSources& sources, const std::string& base_workload,
                                    std::string& workload_file, std::vector<std::string>& sets);

}  // namespace podsim::driver
