#include "podsim/network/link_load.hpp"

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

}  // namespace podsim::network
