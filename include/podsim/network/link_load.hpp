// Closed-form time of communication on an otherwise idle network: every flow of a phase progresses at
// the same rate, bounded by the most loaded link direction (bytes / effective bandwidth), plus the largest
// route latency and the phase's software latency. This is exactly what the engine's SimGrid model
// computes when nothing else shares the links, so it doubles as the reference the engine is tested
// against and as the fast path for `podsim collective`.
#pragma once

#include <vector>

#include "podsim/plan/flow.hpp"
#include "podsim/topology/topology.hpp"

namespace podsim::network {

struct PhaseCost {
  double transfer = 0;      // bytes-bound part, seconds
  double wire_latency = 0;  // largest route latency
  double software = 0;      // launch + algorithm steps
  int bottleneck_link = -1;
  bool bottleneck_forward = true;
  double total() const { return transfer + wire_latency + software; }
};

PhaseCost idle_phase_cost(const topology::Topology& topo, const plan::CommPhase& phase);
double idle_plan_time(const topology::Topology& topo, const plan::CommPlan& plan);

}  // namespace podsim::network
