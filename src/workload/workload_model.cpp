#include "podsim/workload/workload_model.hpp"

#include <fmt/format.h>

#include <map>

#include "podsim/core/config_node.hpp"
#include "podsim/workload/ctr_ps_model.hpp"
#include "podsim/workload/megatron_builder.hpp"

namespace podsim::workload {
namespace {

// `kind:` -> factory. Each workload kind lives in its own files; add one line here.
const std::map<std::string, WorkloadFactory>& factories() {
  static const std::map<std::string, WorkloadFactory> table = {
      {"transformer_lm", &make_megatron_model},
      {"ctr_sparse_ps", &make_ctr_ps_model},
  };
  return table;
}

}  // namespace

std::unique_ptr<WorkloadModel> load_workload_model(const std::string& path, const Overrides& overrides,
                                                   const topology::Topology& topo) {
  ConfigNode root = ConfigNode::load_file(path);
  for (const auto& [key, value] : overrides)
    root.apply_override(key, value, fmt::format("--set workload.{}={}", key, value));
  std::vector<std::string> kinds;
  for (const auto& [k, _] : factories()) kinds.push_back(k);
  std::string kind = root.choice("kind", kinds);
  auto model = factories().at(kind)(root, path, topo);
  root.reject_unknown_keys();
  return model;
}

}  // namespace podsim::workload
