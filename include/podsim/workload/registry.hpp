// The workload kinds this build knows: `kind:` -> factory. The table is in src/workload/registry.cpp, the
// one file that sees every kind; the base (workload_model.cpp) only looks kinds up here.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "podsim/workload/workload_model.hpp"

namespace podsim::workload {

struct WorkloadRegistry {
  std::map<std::string, WorkloadFactory> by_kind;
  // For kinds whose YAML means something else on some machines: `kind:`, the topology family it applies
  // to (topology::is_family<T>) and the factory used there instead of by_kind's.
  struct OnMachine {
    std::string kind;
    bool (*applies)(const topology::Topology&);
    WorkloadFactory factory;
  };
  std::vector<OnMachine> by_kind_on_machine;
  // summary.csv's settings columns, in order: the setup columns the kinds share, then each kind's own
  // (registry.cpp). Every key of a StepPlan's settings is one of them, so rows of all kinds line up.
  std::vector<std::string> setting_columns;
  // Settings columns added after summary.csv's last column of their time (after mfu_causal), in order.
  std::vector<std::string> late_setting_columns;
};

// The factory for `kind` on `topo` (kind must be a key of by_kind).
WorkloadFactory workload_factory(const WorkloadRegistry& registry, const std::string& kind,
                                 const topology::Topology& topo);

const WorkloadRegistry& workload_registry();

}  // namespace podsim::workload
