// Several training jobs on one cluster (`podsim run --job`): each placed on its own servers, each
// simulated alone, then one step of every job replayed together so that their traffic contends on the
// links they share (spine and core switches, a rail's leaf), giving each job's slowdown against running
// alone. Each job is the usual run on the whole topology (its best candidate setting, as `podsim run`
// picks), moved to its servers with the same device order inside each server.
#pragma once

#include <string>
#include <vector>

#include "podsim/driver/simulation.hpp"
#include "podsim/report/shared_fabric_result.hpp"

namespace podsim::driver {

enum class Placement {
  packed,    // job after job on consecutive servers, from server 0
  spread,    // round robin: server i goes to job i mod (jobs still needing servers)
  explicit_  // the servers each job names (JobRequest::nodes)
};
Placement placement_from_string(const std::string& s);  // InputError naming the valid ones

struct JobRequest {
  std::string workload_file;
  std::vector<std::string> sets;  // workload.* assignments for this job
  std::vector<int> nodes;         // explicit placement only
};

struct SharedFabricRequest {
  std::string topology_file;
  std::vector<std::string> topology_sets;  // topology.* assignments
  std::vector<JobRequest> jobs;
  Placement placement = Placement::packed;
};

// Servers per job for the policy; InputError when they do not fit, or explicit lists overlap, repeat a
// server, lie outside the topology or are fewer than the job needs.
std::vector<std::vector<int>> place_jobs(int topology_nodes, const std::vector<int>& nodes_needed,
                                         Placement placement,
                                         const std::vector<std::vector<int>>& explicit_nodes);

// "0-15,32,40-47" -> servers; InputError naming `flag` when malformed.
std::vector<int> parse_node_list(const std::string& text, const std::string& flag);

report::SharedFabricResult simulate_shared_fabric(const SharedFabricRequest& request,
                                                  const Progress& progress = {});

}  // namespace podsim::driver
