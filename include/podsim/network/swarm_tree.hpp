// Weight broadcast and gradient reduction on a Cerebras SwarmX tree (topology/wafer_cluster.hpp) as flows.
//
// SwarmX nodes replicate what they receive to all their children and add what their children send, at
// line rate, and they do it cut-through: the first bytes of a layer reach the systems while its last bytes
// are still leaving MemoryX. So one operation is one phase holding one flow per tree edge, each carrying
// the whole payload; the phase takes payload / (slowest edge) plus the latency of the deepest path. The
// bytes per edge do not grow with the number of systems: that is what makes the tree scale.
#pragma once

#include "podsim/plan/flow.hpp"
#include "podsim/topology/topology.hpp"

namespace podsim::network {

// MemoryX -> every system, `bytes` arriving at each.
plan::CommPlan swarm_broadcast(const topology::Topology& topo, double bytes);
// Every system -> MemoryX, `bytes` from each, summed on the way (MemoryX receives `bytes`).
plan::CommPlan swarm_reduce(const topology::Topology& topo, double bytes);
// Among the systems only: reduce up to the SwarmX root and broadcast the sum back, pipelined (MemoryX is
// not involved). Empty for one system.
plan::CommPlan swarm_all_reduce(const topology::Topology& topo, double bytes);

}  // namespace podsim::network
