// In-network reduction on the scale-out fabric: InfiniBand SHARP as NCCL's CollNet uses it (NCCL_ALGO=
// CollNetDirect with NCCL_COLLNET_ENABLE=1 and the SHARP plugin; topology key `fabric.in_network_reduction:
// sharp`). NVIDIA/nccl issue 919 (maintainer): "CollnetDirect is alltoall within the node and Collnet
// between nodes"; "NVLS is NVLink SHARP within the node and Collnet between nodes".
//
// collnet_direct: inside each server a direct reduce-scatter and all-gather (each GPU exchanges 1/m of its
// buffer with each of the other m-1 over NVLink); across servers every GPU sends its server-reduced 1/m
// share into its rail's SHARP tree and gets the total back. The switches add what comes up from below, so
// every tree link carries the share once per direction, however many servers are under it: half of what
// a ring puts on a NIC, at a latency that grows with the tree's tiers, not the servers. NCCL pipelines
// the parts: one phase. nvls over several NVLink domains (plan_nvls) is the same tree under NVLS.
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "collective_planners.hpp"
#include "podsim/core/error.hpp"
#include "podsim/topology/families.hpp"

namespace podsim::network {

using topology::Topology;

namespace {

// The rank at position i of each server, for every i: the sets that share one SHARP tree. Empty when the
// servers hold unequal numbers of ranks or a position's ranks are on different rails (no common tree).
std::vector<std::vector<int>> tree_sets(const Topology& topo, const std::vector<std::vector<int>>& nodes) {
  const size_t m = nodes.front().size();
  std::vector<std::vector<int>> sets(m);
  for (const auto& members : nodes) {
    if (members.size() != m) return {};
    for (size_t i = 0; i < m; ++i) {
      if (!sets[i].empty() && topo.rail_of(sets[i].front()) != topo.rail_of(members[i])) return {};
      sets[i].push_back(members[i]);
    }
  }
  return sets;
}

}  // namespace

bool sharp_available(const Topology& topo, const std::vector<std::vector<int>>& nodes) {
  const auto* gpu = topo.family<topology::GpuClusterData>();
  return gpu && gpu->in_network_reduction() && nodes.size() >= 2 && !tree_sets(topo, nodes).empty();
}

int add_sharp_trees(plan::CommPhase& phase, const Topology& topo, const std::vector<std::vector<int>>& nodes,
                    double share) {
  const auto& up = topo.family<topology::GpuClusterData>()->reduction_uplinks;
  int deepest = 0;
  for (const auto& members : tree_sets(topo, nodes)) {
    // The root: the lowest tier where every member's path meets.
    int root = 0;
    auto meet = [&](int tier) {
      return std::all_of(members.begin(), members.end(),
                         [&](int d) { return up[d][tier] == up[members.front()][tier]; });
    };
    while (root < 3 && !meet(root)) ++root;
    if (root == 3 || up[members.front()][root] < 0)
      throw std::logic_error("collnet: the SHARP tree has no switch above every member");
    std::set<std::pair<int, int>> links;  // (child switch, parent switch) below the root
    for (int d : members) {
      phase.flows.push_back(plan::to_switch(d, up[d][0], share));
      phase.flows.push_back(plan::from_switch(up[d][0], d, share));
      for (int tier = 0; tier < root; ++tier) links.insert({up[d][tier], up[d][tier + 1]});
    }
    for (auto [child, parent] : links) {
      phase.flows.push_back({-1, -1, share, child, parent});
      phase.flows.push_back({-1, -1, share, parent, child});
    }
    deepest = std::max(deepest, root + 1);
  }
  return deepest;
}

bool collnet_available(const Topology& topo, const Collective& c) {
  return topo.fabric_profile.protocol("collnet", "simple") &&
         sharp_available(topo, members_by_node(topo, c.group));
}

plan::CommPlan plan_collnet_direct(const Topology& topo, const Collective& c) {
  if (!collnet_available(topo, c))
    throw InputError(fmt::format(
        "algorithm collnet_direct (InfiniBand SHARP) needs `fabric.in_network_reduction: sharp` on a "
        "gpu_cluster whose fabric profile has `protocols: collnet:`, and a group on two or more servers "
        "with the same number of ranks on each, rank i of every server on the same rail; {} {}",
        topo.name,
        topo.family<topology::GpuClusterData>() &&
                topo.family<topology::GpuClusterData>()->in_network_reduction()
            ? "does not offer that for this group"
            : "has no in-network reduction"));
  auto nodes = members_by_node(topo, c.group);
  const int m = static_cast<int>(nodes.front().size());
  // One factor for the whole phase: NCCL's CollNet channels drive NVLink and the NICs alike.
  auto probe = protocol_terms(topo, "collnet", Protocol::simple, 0, 0);
  const double share = c.bytes * probe.byte_scale / m;
  plan::CommPhase phase;
  for (const auto& members : nodes)  // direct reduce-scatter + all-gather: 2 S/m to each other member
    for (int a : members)
      for (int b : members)
        if (a != b) phase.flows.push_back({a, b, 2 * share});
  const int tiers = add_sharp_trees(phase, topo, nodes, share);
  auto terms = protocol_terms(topo, "collnet", Protocol::simple, (m > 1 ? 2 : 0) + 2.0 * tiers, 2.0 * tiers);
  phase.latency = terms.latency;
  return {phase};
}

}  // namespace podsim::network
