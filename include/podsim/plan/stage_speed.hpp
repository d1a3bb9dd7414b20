// A task graph as it runs when some lanes compute slower than nominal (a straggler in a pipeline stage).
#pragma once

#include <vector>

#include "podsim/plan/task_graph.hpp"

namespace podsim::plan {

// Divides the device time of every task on lane s by speed[s] (0 < speed <= 1; lanes beyond speed's size
// and tasks on no lane keep theirs). Communication is left to the network, which is not slowed.
void slow_lanes(TaskGraph& graph, const std::vector<double>& speed);

}  // namespace podsim::plan
