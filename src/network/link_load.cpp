#include "podsim/network/link_load.hpp"

#include <algorithm>
#include <unordered_map>

namespace podsim::network {

PhaseCost idle_phase_cost(const topology::Topology& topo, const plan::CommPhase& phase) {
  PhaseCost cost;
  cost.software = phase.latency;
  // Bytes per link direction: key = link * 2 + (forward ? 0 : 1).
  std::unordered_map<long long, double> load;
  topology::Route route;
  for (const plan::Flow& f : phase.flows) {
    if (f.src == f.dst || f.bytes <= 0) continue;
    route.clear();
    topo.router().route(topo.device_vertex[f.src], topo.device_vertex[f.dst], route);
    double latency = 0;
    for (const auto& hop : route) {
      load[static_cast<long long>(hop.link) * 2 + (hop.forward ? 0 : 1)] += f.bytes;
      latency += topo.links[hop.link].latency;
    }
    cost.wire_latency = std::max(cost.wire_latency, latency);
  }
  for (const auto& [key, bytes] : load) {
    const auto& link = topo.links[key / 2];
    double t = bytes / link.effective_bandwidth();
    if (t > cost.transfer) {
      cost.transfer = t;
      cost.bottleneck_link = static_cast<int>(key / 2);
      cost.bottleneck_forward = key % 2 == 0;
    }
  }
  return cost;
}

double idle_plan_time(const topology::Topology& topo, const plan::CommPlan& plan) {
  double t = 0;
  for (const auto& phase : plan) t += idle_phase_cost(topo, phase).total();
  return t;
}

}  // namespace podsim::network
