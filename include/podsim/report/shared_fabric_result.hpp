// Jobs that share one cluster's fabric (issue 19): each job alone and all of them together.
#pragma once

#include <string>
#include <vector>

#include "podsim/report/run_result.hpp"

namespace podsim::report {

struct JobOnFabric {
  std::string workload_file;
  std::vector<int> nodes;    // the servers it runs on
  RunResult alone;           // the usual run of it (placed from server 0), whose setting it keeps
  double alone_step = 0;     // seconds, alone on `nodes` (the same graph, moved there)
  double together_step = 0;  // seconds from its first task to its last with every job running
  double slowdown() const { return alone_step > 0 ? together_step / alone_step - 1 : 0; }
};

struct SharedFabricResult {
  std::string topology_file, topology_name, placement;
  int topology_nodes = 0;
  std::vector<JobOnFabric> jobs;
  double makespan = 0;               // of the replay with every job
  long long simgrid_activities = 0;  // of that replay
  std::vector<std::string> notes;
};

}  // namespace podsim::report
