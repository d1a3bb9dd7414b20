// Communication as flows between devices (plan layer; the network layer turns collectives into these). A
// collective becomes a short sequence of phases; the flows of one phase run concurrently and the phase ends
// when the slowest is done (this is how ring and tree collectives behave: every rank moves in lockstep with
// its neighbours).
#pragma once

#include <vector>

namespace podsim::plan {

struct Flow {
  int src = -1;      // device rank
  int dst = -1;      // device rank
  double bytes = 0;  // carried over the whole phase
};

struct CommPhase {
  std::vector<Flow> flows;
  double latency = 0;  // closed-form software latency of the phase (launch + algorithm steps), seconds
};

using CommPlan = std::vector<CommPhase>;

}  // namespace podsim::plan
