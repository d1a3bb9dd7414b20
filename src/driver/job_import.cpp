#include "podsim/driver/job_import.hpp"

#include <fmt/format.h>

#include <map>

#include "podsim/core/config_node.hpp"
#include "podsim/core/error.hpp"
#include "podsim/driver/hf_config.hpp"
#include "podsim/driver/megatron_args.hpp"

namespace podsim::driver {
namespace {

std::pair<std::string, std::string> key_value(const std::string& set) {
  auto eq = set.find('=');
  return {set.substr(0, eq), set.substr(eq + 1)};
}

// Both sources describe a transformer language model (model.layers, hidden, heads, ...): a workload of
// another kind has none of those keys, so name its kind rather than fail on the first imported key.
void require_transformer(const JobSources& sources, const std::string& workload_file) {
  ConfigNode root = ConfigNode::load_file(workload_file);
  std::string kind = root.string_or("kind", "transformer_lm");
  if (kind == "transformer_lm") return;
  std::string flags = sources.hf_config.empty()       ? "--megatron-args"
                      : sources.megatron_args.empty() ? "--hf-config"
                                                      : "--hf-config and --megatron-args";
  root.fail("kind",
            fmt::format("{} describes a transformer language model (model.layers, hidden, heads, ...) "
                        "and fills a workload of kind transformer_lm; this workload is kind '{}', "
                        "which has no such keys: give a transformer_lm workload with --workload "
                        "(e.g. workloads/llama3-8b.yaml) or leave --workload out",
                        flags, kind));
}

}  // namespace

std::vector<std::string> import_job(const JobSources& sources, const std::string& base_workload,
                                    std::string& workload_file, std::vector<std::string>& sets) {
  std::vector<std::string> lines;
  if (sources.hf_config.empty() && sources.megatron_args.empty()) return lines;
  if (!workload_file.empty()) require_transformer(sources, workload_file);
  std::vector<JobImport> parts;
  if (!sources.hf_config.empty()) parts.push_back(read_hf_config(sources.hf_config));
  if (!sources.megatron_args.empty()) parts.push_back(read_megatron_args(sources.megatron_args));
  std::map<std::string, std::string> stated;  // key -> value, to name disagreements between the sources
  std::vector<std::string> imported;
  for (const auto& part : parts) {
    for (const auto& s : part.sets) {
      auto [key, value] = key_value(s);
      if (auto it = stated.find(key); it != stated.end() && it->second != value && key != "workload.name")
        lines.push_back(
            fmt::format("warning: --hf-config gives {}={} and --megatron-args {}: took {} (the "
                        "launch command is what ran)",
                        key.substr(9), it->second, value, value));
      stated[key] = value;
      imported.push_back(s);
    }
    for (const auto& w : part.warnings) lines.push_back("warning: " + w);
    for (const auto& n : part.notes) lines.push_back("note: " + n);
  }
  if (workload_file.empty()) {
    for (const char* key : {"workload.model.layers", "workload.model.hidden", "workload.model.heads"})
      if (!stated.count(key))
        throw InputError(
            fmt::format("without --workload, --hf-config or --megatron-args must give the model's "
                        "shape, but nothing gave {} (add --workload FILE, or --num-layers, "
                        "--hidden-size and --num-attention-heads to --megatron-args)",
                        std::string(key).substr(9)));
    workload_file = base_workload;
    lines.push_back(
        fmt::format("note: no --workload: training defaults from {} (global_batch, precision, "
                    "parallel layout: override with --set)",
                    base_workload));
  }
  lines.push_back(fmt::format("note: {} overrides imported, applied before --set", imported.size()));
  imported.insert(imported.end(), sets.begin(), sets.end());
  sets = std::move(imported);
  return lines;
}

}  // namespace podsim::driver
