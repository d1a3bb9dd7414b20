// Direct all_to_all (every pair at once) and send_recv (one transfer).
#include <algorithm>

#include "collective_planners.hpp"

namespace podsim::network {

using topology::Topology;

namespace {

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

}  // namespace

plan::CommPlan plan_direct(const Topology& topo, const Collective& c) {
  return {direct_phase(topo, c.group, c.bytes)};
}

plan::CommPlan plan_point_to_point(const Topology& topo, const Collective& c) {
  plan::CommPhase p;
  p.flows.push_back({c.group[0], c.group[1], c.bytes});
  p.latency = topo.fabric_profile.launch_latency + step_latency(topo, c.group[0], c.group[1]);
  return {p};
}

}  // namespace podsim::network
