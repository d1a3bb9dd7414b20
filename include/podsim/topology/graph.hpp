// Graph algorithms over a Topology, through Boost.Graph: the checks that a hardware description is
// usable (connected, every route valid and shortest) and the figures `topo describe` prints.
#pragma once

#include <string>
#include <vector>

#include "podsim/topology/topology.hpp"

namespace podsim::topology {

// Number of connected components of the link graph (1 for a usable topology).
int connected_components(const Topology& topo);

// Checks that the router's paths between `samples` device pairs are contiguous, end where they should
// and are shortest paths (hop count equal to BFS distance). Returns problems found, empty when fine.
std::vector<std::string> check_routes(const Topology& topo, int samples = 64);

// Throws InputError naming the topology file when the topology is disconnected or mis-routed.
void validate(const Topology& topo);

struct Bisection {
  double bandwidth = 0;  // bytes/s across the cut, one direction
  std::string cut;       // which halves were separated
};
// Maximum flow from the first half of the devices (by rank) to the second half, with every link's
// nominal capacity per direction. For the symmetric topologies podsim models this is the bisection.
Bisection bisection_bandwidth(const Topology& topo);

// Hop diameter over device pairs (sampled when there are many devices).
int device_diameter(const Topology& topo, int max_sources = 64);

}  // namespace podsim::topology
