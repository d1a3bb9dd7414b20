// The closed-form cost of one communication phase on an otherwise idle network (plan layer): every flow
// progresses at the same rate, bounded by the most loaded link direction (bytes / effective bandwidth),
// after the largest route latency. The engine runs a phase that is alone on its links as exactly this
// timer and the network layer reports it as `idle_phase_cost`; both call this one function so that the
// engine's claim "closed form == SimGrid alone" can never drift between two copies.
#pragma once

#include <vector>

#include "podsim/plan/flow.hpp"
#include "podsim/topology/topology.hpp"

namespace podsim::plan {

struct PhaseLoad {
  std::vector<int>
      link_dirs;            // link directions the phase uses (link * 2 + (forward ? 0 : 1)), first use first
  double transfer = 0;      // seconds the most loaded direction needs for its bytes
  double wire_latency = 0;  // the largest route latency of a flow
  int bottleneck_dir = -1;  // the direction that sets `transfer`; the earliest used among equals
};

// Reusable buffers so that the engine does not allocate per phase. `bytes` is indexed by link direction;
// it is grown as needed and left all zero.
struct PhaseLoadScratch {
  std::vector<double> bytes;
  topology::Route route;
};

PhaseLoad phase_load(const topology::Topology& topo, const CommPhase& phase, PhaseLoadScratch& scratch);

}  // namespace podsim::plan
