// The key that sizes a topology of each family, for "not enough devices" errors: servers
// (topology.nodes) on GPU and CPU clusters, the slice shape (topology.dims) on a TPU torus, CS systems
// (topology.systems) on a wafer cluster.
#pragma once

#include <string>

#include "podsim/topology/topology.hpp"

namespace podsim::topology {

// "--set topology.nodes=N", "--set topology.dims=[A,B,C] (up to pod_dims)" or "--set topology.systems=N".
std::string resize_hint(const Topology& topo);

// `message` with the GPU clusters' hint "--set topology.nodes=N" replaced by resize_hint(topo).
std::string with_resize_hint(const std::string& message, const Topology& topo);

}  // namespace podsim::topology
