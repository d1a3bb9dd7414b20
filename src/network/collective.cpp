#include "podsim/network/collective.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <stdexcept>

#include "podsim/network/collective_registry.hpp"
#include "podsim/network/torus_collectives.hpp"

namespace podsim::network {

using topology::Topology;

const char* to_string(CollectiveKind k) {
  return kCollectiveKindNames.name(k);
}

CollectiveKind parse_collective(const std::string& name) {
  return kCollectiveKindNames.parse_or_throw(name, "collective");
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
  unsigned looked_up = 0;  // link classes whose step is counted: a route crosses few, in many hops
  for (const auto& hop : route) {
    const unsigned bit = 1u << static_cast<unsigned>(topo.links[hop.link].cls);
    if (looked_up & bit) continue;
    looked_up |= bit;
    step = std::max(step, topo.fabric_profile.step(to_string(topo.links[hop.link].cls)));
  }
  return step;
}

plan::CommPhase serial_merge(const std::vector<plan::CommPlan>& plans) {
  plan::CommPhase merged;
  std::map<std::array<int, 4>, size_t> index;  // (src, dst, src_vertex, dst_vertex) -> flow
  for (const auto& plan : plans)
    for (const auto& phase : plan) {
      merged.latency += phase.latency;
      for (const auto& f : phase.flows) {
        auto [it, fresh] = index.try_emplace({f.src, f.dst, f.src_vertex, f.dst_vertex}, merged.flows.size());
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
  if (c.algorithm == Algorithm::automatic || c.protocol == Protocol::automatic) {
    auto choice = select_collective(topo, c);
    Collective chosen = c;
    chosen.algorithm = choice.algorithm;
    chosen.protocol = choice.protocol;
    return planner_for(chosen.kind, chosen.algorithm)(topo, chosen);
  }
  return planner_for(c.kind, c.algorithm)(topo, c);
}

}  // namespace podsim::network
