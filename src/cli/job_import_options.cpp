#include "podsim/cli/job_import_options.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "podsim/cli/commands.hpp"
#include "podsim/core/error.hpp"

namespace podsim::cli {

void add_job_import_options(CLI::App& cmd, driver::JobSources& sources) {
  cmd.add_option("--hf-config", sources.hf_config,
                 "A HuggingFace config.json: fills model.* and moe.* (layers, hidden, heads, KV heads, MLP,\n"
                 "norm, vocabulary, MoE and MLA fields) before --set; without --workload the training\n"
                 "defaults of workloads/base-llm.yaml are used");
  cmd.add_option("--megatron-args", sources.megatron_args,
                 "A Megatron-LM launch command line (or @FILE holding it): fills model, parallel and\n"
                 "training keys from --num-layers, --tensor-model-parallel-size, --micro-batch-size, ...\n"
                 "before --set; arguments podsim does not understand are listed");
}

void apply_job_import(const driver::JobSources& sources, std::string& workload_file,
                      std::vector<std::string>& sets, bool quiet) {
  if (workload_file.empty() && sources.hf_config.empty() && sources.megatron_args.empty())
    throw InputError("--workload is required (or --hf-config / --megatron-args to bring a model)");
  auto lines = driver::import_job(sources, find_project_file("workloads/base-llm.yaml"), workload_file, sets);
  for (const auto& line : lines)
    if (!quiet || line.rfind("warning: ", 0) == 0) fmt::print(stderr, "{}\n", line);
}

}  // namespace podsim::cli
