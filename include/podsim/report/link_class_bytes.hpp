// Bytes each communication plan of a step puts on each link class (nvlink, infiniband, ici, ...), so that
// the trace (report/trace.hpp) can draw the utilization of every class over the step: a task's bytes per
// class, spread over the task's communication time, divided by the class's capacity. The same routing as
// `podsim run --links` (report/link_traffic.hpp), kept per plan instead of summed per link.
#pragma once

#include <string>
#include <vector>

#include "podsim/plan/task_graph.hpp"
#include "podsim/topology/topology.hpp"

namespace podsim::report {

struct PlanClassBytes {
  std::vector<std::string> classes;  // the classes the topology has, in LinkClass order
  std::vector<double> capacity;      // bytes/s per class: nominal bandwidth of both directions, all links
  std::vector<std::vector<double>> bytes;  // [plan][class]: one run of the plan, summed over every hop
};

// Plans no task runs are left at zero bytes (nothing routes them).
PlanClassBytes plan_class_bytes(const topology::Topology& topo, const plan::TaskGraph& graph);

}  // namespace podsim::report
