// The planners behind the collective registry (collective_registry.cpp), one file each, and the pieces
// they share. Private to the network layer: everything else goes through plan_collective.
#pragma once

#include <functional>
#include <vector>

#include "podsim/network/collective.hpp"

namespace podsim::network {

// The group's members grouped by `key` (a server, an NVLink domain), groups in order of first appearance.
std::vector<std::vector<int>> members_by(const std::vector<int>& group, const std::function<int(int)>& key);
// The group's members per server, servers in order of first appearance.
std::vector<std::vector<int>> members_by_node(const topology::Topology& topo, const std::vector<int>& group);
// Whole servers (every one of their devices a member), each device with its own NIC: every server's NVLink
// flows and every rail's inter-server flows are alike and share no link with another's, so the folded
// all-to-all and the flex dispatch simulate one server and one rail for all (all_to_all.cpp).
bool whole_servers_with_own_nics(const topology::Topology& topo, const std::vector<std::vector<int>>& nodes);
// One phase of NCCL-style rings (one per rail when the group spans several GPUs on several servers).
plan::CommPhase ring_phase(const topology::Topology& topo, CollectiveKind kind, const std::vector<int>& group,
                           double bytes, Protocol protocol);
// How many parallel channels (one per rail, like NCCL's) a group spread over these servers can use: the
// distinct rails of the server with the fewest members, 1 when every server holds one member.
int rail_channels(const topology::Topology& topo, const std::vector<std::vector<int>>& nodes);

// The protocol costs of a step-wise algorithm (protocol_cost.cpp). Not `modelled` when the fabric profile
// has no `protocols:` entry for it: the planner then uses launch + steps x step latency, full bandwidth.
struct ProtocolTerms {
  double latency = 0;     // base + steps x their latency, seconds
  double byte_scale = 1;  // wire bytes per payload byte (1 / bandwidth factor)
  bool modelled = false;
};
// `family`: "ring" or "tree"; steps: all the algorithm's steps, inter_steps: those that cross servers.
ProtocolTerms protocol_terms(const topology::Topology& topo, const char* family, Protocol p, double steps,
                             double inter_steps);
// The protocol table an algorithm reads ("ring", "tree"; null for algorithms without protocols).
const char* protocol_family(Algorithm a);

// NCCL's double binary tree across servers: `heads` holds one rank per server (in server order); every
// edge of both trees carries `share` bytes each way (reduce up, broadcast down, pipelined in one phase).
void add_server_trees(plan::CommPhase& phase, const std::vector<int>& heads, double share);

plan::CommPlan plan_ring(const topology::Topology& topo, const Collective& c);
plan::CommPlan plan_tree(const topology::Topology& topo, const Collective& c);
plan::CommPlan plan_hierarchical(const topology::Topology& topo, const Collective& c);
plan::CommPlan plan_direct(const topology::Topology& topo, const Collective& c);
// NVLink SHARP all_reduce (nvls_collective.cpp): flows into the group's NVSwitch and back. Available when
// every rank is on one NVLink domain and the fabric profile models `nvls`; otherwise an input error.
plan::CommPlan plan_nvls(const topology::Topology& topo, const Collective& c);
bool nvls_available(const topology::Topology& topo, const Collective& c);
// NVLS inside one NVLink domain: every member's `bytes` (wire bytes) into its NVSwitch vertex and the
// reduced result back, S (1 + 1/n) per GPU port and direction.
void add_nvls_domain(plan::CommPhase& phase, const topology::Topology& topo, const std::vector<int>& members,
                     double bytes);
// NVLSTree all_reduce (nvls_tree_collective.cpp): NVLS inside each NVLink domain, a tree across them.
plan::CommPlan plan_nvls_tree(const topology::Topology& topo, const Collective& c);
bool nvls_tree_available(const topology::Topology& topo, const Collective& c);
// InfiniBand SHARP (collnet_collective.cpp). sharp_available: the fabric reduces and these servers' ranks
// (members_by_node) form one SHARP tree per position. add_sharp_trees: flows for every rank's `share` into
// its rail's tree and back, each tree link once per direction; returns the tiers of the deepest tree.
bool sharp_available(const topology::Topology& topo, const std::vector<std::vector<int>>& nodes);
int add_sharp_trees(plan::CommPhase& phase, const topology::Topology& topo,
                    const std::vector<std::vector<int>>& nodes, double share);
plan::CommPlan plan_collnet_direct(const topology::Topology& topo, const Collective& c);
bool collnet_available(const topology::Topology& topo, const Collective& c);
// PAT all_gather / reduce_scatter (pat_collective.cpp): one rank per server, log2(n) steps.
plan::CommPlan plan_pat(const topology::Topology& topo, const Collective& c);
bool pat_available(const topology::Topology& topo, const Collective& c);
// send_recv: one transfer from the group's first rank to its second, whatever the algorithm.
plan::CommPlan plan_point_to_point(const topology::Topology& topo, const Collective& c);

}  // namespace podsim::network
