// Several jobs' task graphs as one graph, so that their traffic shares the fabric in one replay
// (driver/shared_fabric). Each job keeps its own streams, lanes and plans; nothing links them but the
// links their flows cross.
#pragma once

#include <string>
#include <vector>

#include "podsim/plan/task_graph.hpp"

namespace podsim::plan {

// Moves the graph to other devices: every device rank d (streams, lanes, flow ends) becomes
// device_map[d], and a flow end at a switch vertex v (in-network reduction) becomes vertex_map[v]. A rank
// or vertex the maps do not cover (or map to -1) is a logic error.
void relocate_devices(TaskGraph& graph, const std::vector<int>& device_map,
                      const std::vector<int>& vertex_map = {});

// Appends `part` after what `into` holds: its streams, tasks (dependencies renumbered), plans and lanes
// (names prefixed with `lane_prefix`). Returns the index of its first task in `into`.
int append_graph(TaskGraph& into, const TaskGraph& part, const std::string& lane_prefix);

}  // namespace podsim::plan
