// Closed-form time of communication on an otherwise idle network: every flow of a phase progresses at
// the same rate, bounded by the most loaded link direction (bytes / effective bandwidth), plus the largest
// route latency and the phase's software latency. This is exactly what the engine's SimGrid model
// computes when nothing else shares the links, so it doubles as the reference the engine is tested
// against and as the fast path for `podsim collective`.
#pragma once

#include <utility>
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

// Seconds each link direction (link * 2 + (forward ? 0 : 1)) needs for all of a plan's bytes at its
// effective bandwidth, whatever order its phases run in: traffic that must all cross a link takes at least
// that long. Sparse, in first-use order.
using LinkSeconds = std::vector<std::pair<int, double>>;
LinkSeconds idle_link_seconds(const topology::Topology& topo, const plan::CommPlan& plan);

// Sums such profiles, each a number of times over, and reads the busiest link direction: the least time
// that traffic takes, whatever order it runs in. One buffer the size of the fabric, reused.
class LinkLoadSum {
 public:
  explicit LinkLoadSum(const topology::Topology& topo) : load_(topo.links.size() * 2, 0.0) {}
  void add(const LinkSeconds& profile, double times);
  double busiest_and_clear();  // seconds; the sum starts again from zero

 private:
  std::vector<double> load_;  // per link direction
  std::vector<int> touched_;
};

}  // namespace podsim::network
