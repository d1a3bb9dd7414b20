// Ring collectives (all_reduce, all_gather, reduce_scatter, broadcast), NCCL-style channels.
#include <algorithm>
#include <functional>
#include <limits>
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

std::vector<std::vector<int>> members_by(const std::vector<int>& group, const std::function<int(int)>& key) {
  std::vector<std::vector<int>> out;
  std::map<int, size_t> index;
  for (int d : group) {
    auto [it, fresh] = index.try_emplace(key(d), out.size());
    if (fresh) out.emplace_back();
    out[it->second].push_back(d);
  }
  return out;
}

std::vector<std::vector<int>> members_by_node(const Topology& topo, const std::vector<int>& group) {
  return members_by(group, [&](int d) { return topo.node_of(d); });
}

int rail_channels(const Topology& topo, const std::vector<std::vector<int>>& nodes) {
  if (nodes.size() < 2) return 1;
  int channels = std::numeric_limits<int>::max();
  for (const auto& members : nodes) {
    std::vector<int> rails;
    for (int d : members) rails.push_back(topo.rail_of(d));
    std::sort(rails.begin(), rails.end());
    channels =
        std::min<int>(channels, static_cast<int>(std::unique(rails.begin(), rails.end()) - rails.begin()));
  }
  return std::max(1, channels);
}

// One ring per channel. With several GPUs of the group on each of several servers, NCCL runs one ring
// per rail; channel c enters every server at the member c/channels of the way along its list, so each
// ring's inter-server hop uses a different NIC and the NICs work in parallel. Servers with unequal
// member counts (8 + 4) still get as many channels as the smallest server has rails.
plan::CommPhase ring_phase(const Topology& topo, CollectiveKind kind, const std::vector<int>& group,
                           double bytes, Protocol protocol) {
  const int n = static_cast<int>(group.size());
  plan::CommPhase phase;
  auto nodes = members_by_node(topo, group);
  int channels = rail_channels(topo, nodes);
  const double steps = ring_steps(kind, n);
  const int servers = static_cast<int>(nodes.size());
  // NCCL's count of the steps that cross servers: each server boundary once per pass of the ring.
  const double inter_steps = servers == 1                         ? 0
                             : kind == CollectiveKind::all_reduce ? 2.0 * (servers - 1)
                                                                  : servers - 1;
  auto terms = protocol_terms(topo, "ring", protocol, steps, inter_steps);
  double edge = ring_edge_bytes(kind, n, bytes) * terms.byte_scale / channels;
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
      if (!terms.modelled) max_step = std::max(max_step, step_latency(topo, src, dst));
    }
  }
  phase.latency = terms.modelled ? terms.latency : topo.fabric_profile.launch_latency + steps * max_step;
  return phase;
}

plan::CommPlan plan_ring(const Topology& topo, const Collective& c) {
  return {ring_phase(topo, c.kind, c.group, c.bytes, c.protocol)};
}

}  // namespace podsim::network
