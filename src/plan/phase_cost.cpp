#include "podsim/plan/phase_cost.hpp"

#include <algorithm>

namespace podsim::plan {

PhaseLoad phase_load(const topology::Topology& topo, const CommPhase& phase, PhaseLoadScratch& scratch) {
  PhaseLoad out;
  auto& load = scratch.bytes;
  if (load.size() < topo.links.size() * 2) load.assign(topo.links.size() * 2, 0.0);
  for (const Flow& f : phase.flows) {
    if (moves_nothing(f)) continue;
    scratch.route.clear();
    topo.router().route(source_vertex(topo, f), target_vertex(topo, f), scratch.route);
    double latency = 0;
    for (const auto& hop : scratch.route) {
      int ld = hop.link * 2 + (hop.forward ? 0 : 1);
      if (load[ld] == 0) out.link_dirs.push_back(ld);
      load[ld] += f.bytes;
      latency += topo.links[hop.link].latency;
    }
    out.wire_latency = std::max(out.wire_latency, latency);
  }
  for (int ld : out.link_dirs) {
    double t = load[ld] / topo.links[ld / 2].effective_bandwidth();
    if (t > out.transfer) {
      out.transfer = t;
      out.bottleneck_dir = ld;
    }
    load[ld] = 0;
  }
  return out;
}

}  // namespace podsim::plan
