#include "podsim/network/collective.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "podsim/network/torus_collectives.hpp"

namespace podsim::network {
namespace {

using topology::Topology;

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

plan::CommPhase tree_phase(const Topology& topo, const std::vector<int>& group, double bytes) {
  // Binary tree in heap order: reduce towards the root, broadcast back; pipelining overlaps the two, so
  // each tree edge carries `bytes` in each direction within one phase.
  const int n = static_cast<int>(group.size());
  plan::CommPhase phase;
  double max_step = 0;
  for (int i = 1; i < n; ++i) {
    int parent = group[(i - 1) / 2], child = group[i];
    phase.flows.push_back({child, parent, bytes});
    phase.flows.push_back({parent, child, bytes});
    max_step = std::max(max_step, step_latency(topo, child, parent));
  }
  phase.latency = topo.fabric_profile.launch_latency + 2 * std::ceil(std::log2(std::max(n, 2))) * max_step;
  return phase;
}

plan::CommPhase direct_phase(const Topology& topo, const std::vector<int>& group, double bytes_per_rank) {
  const int n = static_cast<int>(group.size());
  plan::CommPhase phase;
  double per_peer = bytes_per_rank / n;
  double max_step = 0;
  for (int s : group)
    for (int d : group) {
      if (s == d) continue;
      phase.flows.push_back({s, d, per_peer});
      max_step = std::max(max_step, step_latency(topo, s, d));
    }
  phase.latency = topo.fabric_profile.launch_latency + max_step;
  return phase;
}

plan::CommPlan hierarchical_all_reduce(const Topology& topo, const std::vector<int>& group, double bytes) {
  auto nodes = members_by_node(topo, group);
  size_t m = nodes[0].size();
  for (const auto& members : nodes)
    if (members.size() != m || m == 1 || nodes.size() == 1)
      return {ring_phase(topo, CollectiveKind::all_reduce, group, bytes)};  // not hierarchical in shape
  plan::CommPlan plan(3);
  for (const auto& members : nodes) {
    auto rs = ring_phase(topo, CollectiveKind::reduce_scatter, members, bytes);
    plan[0].flows.insert(plan[0].flows.end(), rs.flows.begin(), rs.flows.end());
    plan[0].latency = std::max(plan[0].latency, rs.latency);
    auto ag = ring_phase(topo, CollectiveKind::all_gather, members, bytes);
    plan[2].flows.insert(plan[2].flows.end(), ag.flows.begin(), ag.flows.end());
    plan[2].latency = std::max(plan[2].latency, ag.latency);
  }
  for (size_t local = 0; local < m; ++local) {
    std::vector<int> across;
    for (const auto& members : nodes) across.push_back(members[local]);
    auto ar = ring_phase(topo, CollectiveKind::all_reduce, across, bytes / m);
    plan[1].flows.insert(plan[1].flows.end(), ar.flows.begin(), ar.flows.end());
    plan[1].latency = std::max(plan[1].latency, ar.latency);
  }
  return plan;
}

}  // namespace

const char* to_string(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::all_reduce: return "all_reduce";
    case CollectiveKind::all_gather: return "all_gather";
    case CollectiveKind::reduce_scatter: return "reduce_scatter";
    case CollectiveKind::all_to_all: return "all_to_all";
    case CollectiveKind::broadcast: return "broadcast";
    case CollectiveKind::send_recv: return "send_recv";
  }
  return "?";
}

const char* to_string(Algorithm a) {
  switch (a) {
    case Algorithm::ring: return "ring";
    case Algorithm::tree: return "tree";
    case Algorithm::hierarchical: return "hierarchical";
    case Algorithm::direct: return "direct";
  }
  return "?";
}

CollectiveKind parse_collective(const std::string& name) {
  for (auto k : {CollectiveKind::all_reduce, CollectiveKind::all_gather, CollectiveKind::reduce_scatter,
                 CollectiveKind::all_to_all, CollectiveKind::broadcast, CollectiveKind::send_recv})
    if (name == to_string(k)) return k;
  throw std::invalid_argument(
      fmt::format("unknown collective '{}' (valid: all_reduce, all_gather, reduce_scatter, all_to_all, "
                  "broadcast, send_recv)",
                  name));
}

Algorithm parse_algorithm(const std::string& name) {
  for (auto a : {Algorithm::ring, Algorithm::tree, Algorithm::hierarchical, Algorithm::direct})
    if (name == to_string(a)) return a;
  throw std::invalid_argument(
      fmt::format("unknown algorithm '{}' (valid: ring, tree, hierarchical, direct)", name));
}

Collective make_collective(CollectiveKind kind, std::vector<int> group, double bytes) {
  Collective c;
  c.kind = kind;
  c.group = std::move(group);
  c.bytes = bytes;
  return c;
}

double bus_factor(CollectiveKind kind, int ranks) {
  switch (kind) {
    case CollectiveKind::all_reduce: return 2.0 * (ranks - 1) / ranks;
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_to_all: return static_cast<double>(ranks - 1) / ranks;
    default: return 1.0;
  }
}

double step_latency(const Topology& topo, int src, int dst) {
  topology::Route route;
  topo.router().route(topo.device_vertex[src], topo.device_vertex[dst], route);
  double step = 0;
  for (const auto& hop : route)
    step = std::max(step, topo.fabric_profile.step(to_string(topo.links[hop.link].cls)));
  return step;
}

plan::CommPhase serial_merge(const std::vector<plan::CommPlan>& plans) {
  plan::CommPhase merged;
  std::map<std::pair<int, int>, size_t> index;
  for (const auto& plan : plans)
    for (const auto& phase : plan) {
      merged.latency += phase.latency;
      for (const auto& f : phase.flows) {
        auto [it, fresh] = index.try_emplace({f.src, f.dst}, merged.flows.size());
        if (fresh)
          merged.flows.push_back(f);
        else
          merged.flows[it->second].bytes += f.bytes;
      }
    }
  return merged;
}

plan::CommPlan concurrent(const std::vector<plan::CommPlan>& plans) {
  plan::CommPlan out;
  for (const auto& plan : plans) {
    if (out.size() < plan.size()) out.resize(plan.size());
    for (size_t i = 0; i < plan.size(); ++i) {
      out[i].flows.insert(out[i].flows.end(), plan[i].flows.begin(), plan[i].flows.end());
      out[i].latency = std::max(out[i].latency, plan[i].latency);
    }
  }
  return out;
}

plan::CommPlan scaled(const plan::CommPlan& plan, double factor) {
  plan::CommPlan out = plan;
  for (auto& phase : out) {
    phase.latency *= factor;
    for (auto& f : phase.flows) f.bytes *= factor;
  }
  return out;
}

plan::CommPlan plan_collective(const Topology& topo, const Collective& c) {
  if (const auto* torus = topo.family<topology::TorusGeometry>())
    return plan_torus_collective(topo, *torus, c);
  return plan_collective_generic(topo, c);
}

plan::CommPlan plan_collective_generic(const Topology& topo, const Collective& c) {
  if (c.group.size() < 2 || c.bytes <= 0) return {};
  switch (c.kind) {
    case CollectiveKind::send_recv: {
      plan::CommPhase p;
      p.flows.push_back({c.group[0], c.group[1], c.bytes});
      p.latency = topo.fabric_profile.launch_latency + step_latency(topo, c.group[0], c.group[1]);
      return {p};
    }
    case CollectiveKind::all_to_all: return {direct_phase(topo, c.group, c.bytes)};
    case CollectiveKind::all_reduce:
      if (c.algorithm == Algorithm::tree) return {tree_phase(topo, c.group, c.bytes)};
      if (c.algorithm == Algorithm::hierarchical) return hierarchical_all_reduce(topo, c.group, c.bytes);
      return {ring_phase(topo, c.kind, c.group, c.bytes)};
    default: return {ring_phase(topo, c.kind, c.group, c.bytes)};
  }
}

}  // namespace podsim::network
