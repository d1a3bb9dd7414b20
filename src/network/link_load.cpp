#include "podsim/network/link_load.hpp"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "podsim/plan/phase_cost.hpp"

namespace podsim::network {

PhaseCost idle_phase_cost(const topology::Topology& topo, const plan::CommPhase& phase) {
  // One scratch per thread: its per-link buffer is as large as the fabric (a million link directions at
  // 100k GPUs), and zeroing it per call was a fifth of building a 100k-GPU step (docs/scale.md).
  thread_local plan::PhaseLoadScratch scratch;
  plan::PhaseLoad load = plan::phase_load(topo, phase, scratch);
  PhaseCost cost;
  cost.software = phase.latency;
  cost.wire_latency = load.wire_latency;
  cost.transfer = load.transfer;
  if (load.bottleneck_dir >= 0) {
    cost.bottleneck_link = load.bottleneck_dir / 2;
    cost.bottleneck_forward = load.bottleneck_dir % 2 == 0;
  }
  return cost;
}

double idle_plan_time(const topology::Topology& topo, const plan::CommPlan& plan) {
  double t = 0;
  for (const auto& phase : plan) t += idle_phase_cost(topo, phase).total();
  return t;
}

LinkSeconds idle_link_seconds(const topology::Topology& topo, const plan::CommPlan& plan) {
  std::unordered_map<int, size_t> index;  // link direction -> entry
  LinkSeconds out;
  topology::Route route;
  for (const auto& phase : plan)
    for (const auto& f : phase.flows) {
      if (plan::moves_nothing(f)) continue;
      route.clear();
      topo.router().route(plan::source_vertex(topo, f), plan::target_vertex(topo, f), route);
      for (const auto& hop : route) {
        int ld = hop.link * 2 + (hop.forward ? 0 : 1);
        auto [it, added] = index.emplace(ld, out.size());
        if (added) out.emplace_back(ld, 0.0);
        out[it->second].second += f.bytes;
      }
    }
  for (auto& [ld, seconds] : out) seconds /= topo.links[static_cast<size_t>(ld / 2)].effective_bandwidth();
  return out;
}

void LinkLoadSum::add(const LinkSeconds& profile, double times) {
  for (const auto& [ld, seconds] : profile) {
    auto& load = load_[static_cast<size_t>(ld)];
    if (load == 0) touched_.push_back(ld);
    load += times * seconds;
  }
}

double LinkLoadSum::busiest_and_clear() {
  double busiest = 0;
  for (int ld : touched_) busiest = std::max(busiest, std::exchange(load_[static_cast<size_t>(ld)], 0.0));
  touched_.clear();
  return busiest;
}

}  // namespace podsim::network
