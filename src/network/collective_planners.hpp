// The planners behind the collective registry (collective_registry.cpp), one file each, and the pieces
// they share. Private to the network layer: everything else goes through plan_collective.
#pragma once

#include <vector>

#include "podsim/network/collective.hpp"

namespace podsim::network {

// The group's members per server, servers in order of first appearance.
std::vector<std::vector<int>> members_by_node(const topology::Topology& topo, const std::vector<int>& group);
// One phase of NCCL-style rings (one per rail when the group spans several GPUs on several servers).
plan::CommPhase ring_phase(const topology::Topology& topo, CollectiveKind kind, const std::vector<int>& group,
                           double bytes);

plan::CommPlan plan_ring(const topology::Topology& topo, const Collective& c);
plan::CommPlan plan_tree(const topology::Topology& topo, const Collective& c);
plan::CommPlan plan_hierarchical(const topology::Topology& topo, const Collective& c);
plan::CommPlan plan_direct(const topology::Topology& topo, const Collective& c);
// send_recv: one transfer from the group's first rank to its second, whatever the algorithm.
plan::CommPlan plan_point_to_point(const topology::Topology& topo, const Collective& c);

}  // namespace podsim::network
