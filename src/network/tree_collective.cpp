// Tree all_reduce as NCCL runs it: inside each server a chain through the group's members, across servers
// a double binary tree (two complementary trees, each carrying half the data, so a server that is an inner
// node of one tree is a leaf of the other and every NIC carries about what a ring would). One such pair of
// trees per rail channel. Reduce flows up to the root, broadcast back down; pipelining overlaps the two,
// so every tree edge carries its share in each direction within one phase.
#include <algorithm>
#include <cmath>

#include "collective_planners.hpp"

namespace podsim::network {

using topology::Topology;

namespace {

// Parent of server `i` of `n` in the first tree (-1: the root): the in-order binary tree on positions
// 1..n, where a position's level is its number of trailing zero bits, leaves are the odd positions and
// the root is the largest power of two not above n. Positions beyond n are skipped upwards.
int first_tree_parent(int i, int n) {
  int root = 1;
  while (root * 2 <= n) root *= 2;
  int p = i + 1;
  if (p == root) return -1;
  auto up = [](int q) {
    int low = q & -q;
    return (q & (2 * low)) ? q - low : q + low;
  };
  int q = up(p);
  while (q > n) q = up(q);
  return q - 1;
}

// The second tree: the first one mirrored (n even) or shifted by one server (n odd), which makes the
// leaves of one tree the inner nodes of the other.
int second_tree_parent(int i, int n) {
  if (n % 2 == 0) {
    int p = first_tree_parent(n - 1 - i, n);
    return p < 0 ? -1 : n - 1 - p;
  }
  int p = first_tree_parent((i + n - 1) % n, n);
  return p < 0 ? -1 : (p + 1) % n;
}

void both_ways(plan::CommPhase& phase, int a, int b, double bytes) {
  phase.flows.push_back({a, b, bytes});
  phase.flows.push_back({b, a, bytes});
}

double legacy_latency(const Topology& topo, const plan::CommPhase& phase, int n) {
  double max_step = 0;
  for (const auto& f : phase.flows) max_step = std::max(max_step, step_latency(topo, f.src, f.dst));
  return topo.fabric_profile.launch_latency + 2 * std::ceil(std::log2(std::max(n, 2))) * max_step;
}

plan::CommPhase tree_phase(const Topology& topo, const Collective& c) {
  auto nodes = members_by_node(topo, c.group);
  const int servers = static_cast<int>(nodes.size());
  const int channels = rail_channels(topo, nodes);
  size_t per_node = 0;
  for (const auto& members : nodes) per_node = std::max(per_node, members.size());
  // NCCL's latency: up and down, through the chain inside a server and the tree's depth across servers.
  const double depth = servers > 1 ? std::floor(std::log2(servers)) : 0;
  auto terms = protocol_terms(topo, "tree", c.protocol, 2.0 * (per_node - 1 + depth), 2.0 * depth);
  const int trees = servers > 1 ? 2 : 1;
  const double share = c.bytes * terms.byte_scale / (trees * channels);
  plan::CommPhase phase;
  for (int ch = 0; ch < channels; ++ch) {
    std::vector<int> heads;
    for (const auto& members : nodes) {
      size_t m = members.size(), shift = ch * m / channels;
      for (size_t i = 0; i + 1 < m; ++i)
        both_ways(phase, members[(i + shift) % m], members[(i + 1 + shift) % m], share * trees);
      heads.push_back(members[shift % m]);
    }
    add_server_trees(phase, heads, share);
  }
  phase.latency =
      terms.modelled ? terms.latency : legacy_latency(topo, phase, static_cast<int>(c.group.size()));
  return phase;
}

}  // namespace

void add_server_trees(plan::CommPhase& phase, const std::vector<int>& heads, double share) {
  const int servers = static_cast<int>(heads.size());
  for (int s = 0; s < servers && servers > 1; ++s) {
    int p0 = first_tree_parent(s, servers), p1 = second_tree_parent(s, servers);
    if (p0 >= 0) both_ways(phase, heads[s], heads[p0], share);
    if (p1 >= 0) both_ways(phase, heads[s], heads[p1], share);
  }
}

plan::CommPlan plan_tree(const Topology& topo, const Collective& c) {
  return {tree_phase(topo, c)};
}

}  // namespace podsim::network
