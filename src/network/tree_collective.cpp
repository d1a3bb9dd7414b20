// Tree all_reduce: reduce towards the root of a binary tree and broadcast back.
#include <algorithm>
#include <cmath>

#include "collective_planners.hpp"

namespace podsim::network {

using topology::Topology;

namespace {

plan::CommPhase tree_phase(const Topology& topo, const std::vector<int>& group, double bytes) {
  // Binary tree in heap order: reduce towards the root, broadcast back; pipelining overlaps the two, so
  // each tree edge carries `bytes` in each direction within one phase.
  const int n = static_cast<int>(group.size());
  plan::CommPhase phase;
  double max_step = 0;
  for (int i = 1; i < n; ++i) {
    int parent = group[(i - 1) / 2], child = group[i];
    phase.flows.push_back({child, parent, bytes});
    phase.flows.push_back({parent, child, bytes});
    max_step = std::max(max_step, step_latency(topo, child, parent));
  }
  phase.latency = topo.fabric_profile.launch_latency + 2 * std::ceil(std::log2(std::max(n, 2))) * max_step;
  return phase;
}

}  // namespace

plan::CommPlan plan_tree(const Topology& topo, const Collective& c) {
  return {tree_phase(topo, c.group, c.bytes)};
}

}  // namespace podsim::network
