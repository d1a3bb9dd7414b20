// Ring collectives (all_reduce, all_gather, reduce_scatter, broadcast), NCCL-style channels.
#include <algorithm>
#include <map>
#include <stdexcept>

#include "collective_planners.hpp"

namespace podsim::network {

using topology::Topology;

namespace {

double ring_steps(CollectiveKind kind, int n) {
  switch (kind) {
    case CollectiveKind::all_reduce: return 2.0 * (n - 1);
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::broadcast: return n - 1;
    default: return 1;
  }
}

// Bytes each ring edge carries over the whole collective.
double ring_edge_bytes(CollectiveKind kind, int n, double bytes) {
  switch (kind) {
    case CollectiveKind::all_reduce: return 2.0 * (n - 1) / n * bytes;
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter: return static_cast<double>(n - 1) / n * bytes;
    case CollectiveKind::broadcast: return bytes;
    default: throw std::logic_error("ring is not an algorithm for this collective");
  }
}

}  // namespace

// The group's members per server, servers in order of first appearance.
std::vector<std::vector<int>> members_by_node(const Topology& topo, const std::vector<int>& group) {
  std::vector<std::vector<int>> out;
  std::map<int, size_t> index;
  for (int d : group) {
    int node = topo.node_of(d);
    auto it = index.find(node);
    if (it == index.end()) {
      index[node] = out.size();
      out.push_back({d});
    } else {
      out[it->second].push_back(d);
    }
  }
  return out;
}

// One ring per channel. With several GPUs of the group on each of several servers, NCCL runs one ring
// per rail; channel c enters every server at its member on rail c, so each ring's inter-server hop uses a
// different NIC and the NICs work in parallel.
plan::CommPhase ring_phase(const Topology& topo, CollectiveKind kind, const std::vector<int>& group,
                           double bytes) {
  const int n = static_cast<int>(group.size());
  plan::CommPhase phase;
  auto nodes = members_by_node(topo, group);
  int channels = 1;
  if (nodes.size() > 1 && nodes[0].size() > 1) {
    std::vector<int> rails;
    for (int d : nodes[0]) rails.push_back(topo.rail_of(d));
    std::sort(rails.begin(), rails.end());
    channels = std::max<int>(1, static_cast<int>(std::unique(rails.begin(), rails.end()) - rails.begin()));
    for (const auto& members : nodes)
      if (members.size() != nodes[0].size()) channels = 1;  // uneven groups: one plain ring
  }
  double edge = ring_edge_bytes(kind, n, bytes) / channels;
  double max_step = 0;
  for (int c = 0; c < channels; ++c) {
    std::vector<int> order;
    if (channels == 1) {
      order = group;
    } else {
      for (const auto& members : nodes) {
        size_t m = members.size(), shift = c * m / channels;
        for (size_t i = 0; i < m; ++i) order.push_back(members[(i + shift) % m]);
      }
    }
    for (int i = 0; i < n; ++i) {
      int src = order[i], dst = order[(i + 1) % n];
      phase.flows.push_back({src, dst, edge});
      max_step = std::max(max_step, step_latency(topo, src, dst));
    }
  }
  phase.latency = topo.fabric_profile.launch_latency + ring_steps(kind, n) * max_step;
  return phase;
}

plan::CommPlan plan_ring(const Topology& topo, const Collective& c) {
  return {ring_phase(topo, c.kind, c.group, c.bytes)};
}

}  // namespace podsim::network
