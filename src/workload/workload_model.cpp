#include "podsim/workload/workload_model.hpp"

#include <fmt/format.h>

#include <map>

#include "podsim/core/config_node.hpp"
#include "podsim/workload/cerebras_model.hpp"
#include "podsim/workload/ctr_ps_model.hpp"
#include "podsim/workload/gshard_builder.hpp"
#include "podsim/workload/megatron_builder.hpp"

namespace podsim::workload {
namespace {

// `kind:` -> factory. Each workload kind lives in its own files; add one line here.
const std::map<std::string, WorkloadFactory>& factories() {
  static const std::map<std::string, WorkloadFactory> table = {
      {"transformer_lm", &make_megatron_model},
      {"gshard_moe", &make_gshard_model},
      {"ctr_sparse_ps", &make_ctr_ps_model},
  };
  return table;
}

// (`kind:`, topology kind) -> factory, for kinds whose YAML means something else on some machines.
const std::map<std::pair<std::string, std::string>, WorkloadFactory>& machine_factories() {
  static const std::map<std::pair<std::string, std::string>, WorkloadFactory> table = {
      {{"transformer_lm", "wafer_cluster"}, &make_cerebras_model},
  };
  return table;
}

}  // namespace

namespace {

std::unique_ptr<WorkloadModel> build_model(ConfigNode root, const std::string& name,
                                           const Overrides& overrides, const topology::Topology& topo) {
  for (const auto& [key, value] : overrides)
    root.apply_override(key, value, fmt::format("--set workload.{}={}", key, value));
  std::vector<std::string> kinds;
  for (const auto& [k, _] : factories()) kinds.push_back(k);
  std::string kind = root.choice("kind", kinds);
  auto machine = machine_factories().find({kind, topo.kind});
  auto factory = machine != machine_factories().end() ? machine->second : factories().at(kind);
  auto model = factory(root, name, topo);
  root.reject_unknown_keys();
  return model;
}

}  // namespace

std::unique_ptr<WorkloadModel> load_workload_model(const std::string& path, const Overrides& overrides,
                                                   const topology::Topology& topo) {
  return build_model(ConfigNode::load_file(path), path, overrides, topo);
}

std::unique_ptr<WorkloadModel> load_workload_model_text(const std::string& text, const std::string& name,
                                                        const Overrides& overrides,
                                                        const topology::Topology& topo) {
  return build_model(ConfigNode::load_string(text, name), name, overrides, topo);
}

}  // namespace podsim::workload
