// --set handling for the subcommands that read a topology and no workload (`topo describe`, `collective`).
#pragma once

#include <string>
#include <vector>

#include "podsim/core/config_node.hpp"

namespace podsim::cli {

// The topology assignments of `sets`. A workload assignment is refused with an InputError that says
// `why_no_workload` (e.g. "a collective has no workload") and suggests `--set
// topology.nodes=<example_nodes>`.
Overrides topology_sets_only(const std::vector<std::string>& sets, const std::string& why_no_workload,
                             int example_nodes);

}  // namespace podsim::cli
