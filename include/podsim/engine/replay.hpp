// Replays a task graph in SimGrid and returns when every task started and ended.
//
// Design (see ../shared/notes/simgrid-3.32.md for the measured facts behind it):
// - Network: SimGrid's ptask_L07 model (max-min fair sharing, exact transfer times). Each communication
//   phase is one parallel task holding all of its flows, so the flows of a ring progress in lockstep at
//   the rate of its most loaded link, and share links with every other phase in flight (tensor-parallel
//   rings on NVSwitch ports, pipeline transfers and gradient rings on the InfiniBand rails).
// - Device time (kernels, software latency) is not a network resource: the representative device of a
//   stream runs one task at a time, so it is a timer in the replay actor rather than a SimGrid Exec.
// - SimGrid 3.32 allows one engine per process, so each replay runs in a forked child process that sends
//   its results back through a pipe. The parent never initializes SimGrid and can replay many graphs.
#pragma once

#include <string>
#include <vector>

#include "podsim/topology/topology.hpp"
#include "podsim/workload/task_graph.hpp"

namespace podsim::engine {

struct TaskTimes {
  double start = 0;        // dependencies met, device busy from here
  double compute_end = 0;  // device time done, communication starts
  double end = 0;          // all phases done
};

struct ReplayResult {
  double makespan = 0;               // simulated seconds from the first task to the last
  std::vector<TaskTimes> tasks;      // indexed like TaskGraph::tasks
  long long simgrid_activities = 0;  // parallel tasks SimGrid simulated
  int hosts = 0, links = 0;          // platform actually instantiated (only what the graph touches)
};

// Runs in a forked child; throws std::runtime_error when the simulation fails.
ReplayResult replay(const topology::Topology& topo, const workload::TaskGraph& graph);

// Runs in this process (SimGrid can then not be used again here). For the child side and for tools.
ReplayResult replay_in_process(const topology::Topology& topo, const workload::TaskGraph& graph);

}  // namespace podsim::engine
