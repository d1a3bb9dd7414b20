// A workload bound to a topology: the settings worth simulating (what `auto` expands to) and, for each,
// the step plan to replay. Each workload kind (`kind:` in the YAML) has one implementation; podsim's
// driver (driver/simulation.cpp) simulates every candidate and reports the fastest that fits.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "podsim/core/config_node.hpp"
#include "podsim/topology/topology.hpp"
#include "podsim/workload/step_plan.hpp"

namespace podsim {
class ConfigNode;
}

namespace podsim::workload {

using podsim::Overrides;  // (dotted path, value), defined in core/config_node.hpp

class WorkloadModel {
 public:
  virtual ~WorkloadModel() = default;
  virtual std::string name() const = 0;
  virtual std::string kind() const = 0;
  virtual int devices() const = 0;
  // At least one; labels read like "micro_batch=2 virtual_stages=4".
  virtual std::vector<std::string> candidates() const = 0;
  // Throws InfeasibleConfig when the candidate cannot run (e.g. status "out_of_memory").
  virtual StepPlan build(size_t candidate) const = 0;
  // What an infeasible candidate would need, for the report: memory per lane and its settings.
  virtual StepPlan describe_infeasible(size_t candidate) const = 0;
};

// Reads the workload file, applies `--set workload.*` overrides, and builds the model for `kind:`.
std::unique_ptr<WorkloadModel> load_workload_model(const std::string& path, const Overrides& overrides,
                                                   const topology::Topology& topo);

std::unique_ptr<WorkloadModel> load_workload_model_text(const std::string& text, const std::string& name,
                                                        const Overrides& overrides,
                                                        const topology::Topology& topo);

// Workload kinds register a factory here (src/workload/registry.cpp).
using WorkloadFactory = std::unique_ptr<WorkloadModel> (*)(const ConfigNode& root, const std::string& file,
                                                           const topology::Topology& topo);

}  // namespace podsim::workload
