// Hierarchical all_reduce: intra-node reduce-scatter, inter-node all_reduce per local rank, intra-node
// all-gather; a plain ring when the group is not that shape.
#include <algorithm>

#include "collective_planners.hpp"

namespace podsim::network {

using topology::Topology;

namespace {

plan::CommPlan hierarchical_all_reduce(const Topology& topo, const std::vector<int>& group, double bytes,
                                       Protocol protocol) {
  auto nodes = members_by_node(topo, group);
  size_t m = nodes[0].size();
  for (const auto& members : nodes)
    if (members.size() != m || m == 1 || nodes.size() == 1)
      return {
          ring_phase(topo, CollectiveKind::all_reduce, group, bytes, protocol)};  // not hierarchical in shape
  plan::CommPlan plan(3);
  for (const auto& members : nodes) {
    auto rs = ring_phase(topo, CollectiveKind::reduce_scatter, members, bytes, protocol);
    plan[0].flows.insert(plan[0].flows.end(), rs.flows.begin(), rs.flows.end());
    plan[0].latency = std::max(plan[0].latency, rs.latency);
    auto ag = ring_phase(topo, CollectiveKind::all_gather, members, bytes, protocol);
    plan[2].flows.insert(plan[2].flows.end(), ag.flows.begin(), ag.flows.end());
    plan[2].latency = std::max(plan[2].latency, ag.latency);
  }
  for (size_t local = 0; local < m; ++local) {
    std::vector<int> across;
    for (const auto& members : nodes) across.push_back(members[local]);
    auto ar = ring_phase(topo, CollectiveKind::all_reduce, across, bytes / m, protocol);
    plan[1].flows.insert(plan[1].flows.end(), ar.flows.begin(), ar.flows.end());
    plan[1].latency = std::max(plan[1].latency, ar.latency);
  }
  return plan;
}

}  // namespace

plan::CommPlan plan_hierarchical(const Topology& topo, const Collective& c) {
  return hierarchical_all_reduce(topo, c.group, c.bytes, c.protocol);
}

}  // namespace podsim::network
