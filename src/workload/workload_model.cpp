#include "podsim/workload/workload_model.hpp"

#include <fmt/format.h>

#include <map>

#include "podsim/core/config_node.hpp"
#include "podsim/workload/registry.hpp"

namespace podsim::workload {
namespace {

std::unique_ptr<WorkloadModel> build_model(ConfigNode root, const std::string& name,
                                           const Overrides& overrides, const topology::Topology& topo) {
  for (const auto& [key, value] : overrides)
    root.apply_override(key, value, fmt::format("--set workload.{}={}", key, value));
  std::vector<std::string> kinds;
  const WorkloadRegistry& registry = workload_registry();
  for (const auto& [k, _] : registry.by_kind) kinds.push_back(k);
  std::string kind = root.choice("kind", kinds);
  auto model = workload_factory(registry, kind, topo)(root, name, topo);
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
