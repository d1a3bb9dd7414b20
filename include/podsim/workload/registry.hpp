// The workload kinds this build knows: `kind:` -> factory. The table is in src/workload/registry.cpp, the
// one file that sees every kind; the base (workload_model.cpp) only looks kinds up here.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "podsim/workload/workload_model.hpp"

namespace podsim::workload {

struct WorkloadRegistry {
  std::map<std::string, WorkloadFactory> by_kind;
  // (`kind:`, topology kind) -> factory, for kinds whose YAML means something else on some machines.
  std::map<std::pair<std::string, std::string>, WorkloadFactory> by_kind_on_machine;
};

const WorkloadRegistry& workload_registry();

}  // namespace podsim::workload
