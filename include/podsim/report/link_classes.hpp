// Which link classes (nvlink, infiniband, ici, ...) the flows of each communication plan cross, for the
// trace's slice details. Computed once per run from the topology's router.
#pragma once

#include <string>
#include <vector>

#include "podsim/plan/task_graph.hpp"
#include "podsim/topology/topology.hpp"

namespace podsim::report {

// Per TaskGraph::plans entry: the classes its flows' routes cross, "+"-joined in LinkClass order
// ("nvlink+infiniband"), "" for a plan without flows. The first flows of every phase (up to 8) and its last
// are routed: the flows of one phase are one collective's, so they cross the same classes.
std::vector<std::string> plan_link_classes(const topology::Topology& topo, const plan::TaskGraph& graph);

}  // namespace podsim::report
