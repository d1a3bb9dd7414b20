#include "podsim/cli/topology_sets.hpp"

#include <fmt/format.h>

#include "podsim/core/error.hpp"
#include "podsim/driver/simulation.hpp"

namespace podsim::cli {

Overrides topology_sets_only(const std::vector<std::string>& sets, const std::string& why_no_workload,
                             int example_nodes) {
  Overrides topology, workload;
  driver::split_sets(sets, topology, workload);
  if (!workload.empty())
    throw InputError(
        fmt::format("--set workload.{}={}: {}; only topology keys can be set, e.g. --set "
                    "topology.nodes={}",
                    workload.front().first, workload.front().second, why_no_workload, example_nodes));
  return topology;
}

}  // namespace podsim::cli
