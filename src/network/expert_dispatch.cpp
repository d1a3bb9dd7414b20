#include "podsim/network/expert_dispatch.hpp"

#include <algorithm>

#include "collective_planners.hpp"

namespace podsim::network {
namespace {

using topology::Topology;

// How many times its bytes a flow from src to dst carries so that it moves at the dispatcher kernels'
// rate: the largest link_efficiency / dispatch_efficiency over the links of its route (1 where the profile
// has no `expert_dispatch:` entry for any of them).
double byte_scale(const Topology& topo, int src, int dst) {
  topology::Route route;
  topo.router().route(topo.device_vertex[src], topo.device_vertex[dst], route);
  double scale = 1;
  for (const auto& hop : route) {
    const auto& link = topo.links[hop.link];
    double dispatch = topo.fabric_profile.dispatch_efficiency(to_string(link.cls));
    if (dispatch > 0) scale = std::max(scale, link.efficiency / dispatch);
  }
  return scale;
}

}  // namespace

plan::CommPhase plan_hierarchical_dispatch(const Topology& topo, const HierarchicalDispatch& d) {
  plan::CommPhase out;
  if (d.group.size() < 2) return out;
  const std::vector<std::vector<int>> nodes = members_by_node(topo, d.group);
  size_t per_node = 0;  // the most ranks any node holds
  for (const auto& ranks : nodes) per_node = std::max(per_node, ranks.size());
  const bool fold = whole_servers_with_own_nics(topo, nodes);
  auto add = [&](int src, int dst, double bytes) {
    if (bytes > 0 && src != dst) out.flows.push_back({src, dst, bytes * byte_scale(topo, src, dst)});
  };
  for (size_t n = 0; n < (fold ? 1 : nodes.size()); ++n)  // the NVLink stage
    for (int a : nodes[n])
      for (int b : nodes[n]) add(a, b, d.to_each_local_peer);
  // The scale-out stage: each rank to the rank of its index on every other node (modulo that node's
  // ranks where nodes hold unequal shares of the group).
  for (size_t i = 0; i < (fold ? 1 : per_node); ++i)
    for (const auto& from : nodes)
      for (const auto& to : nodes)
        if (&from != &to && i < from.size()) add(from[i], to[i % to.size()], d.to_each_remote_peer);
  double step = nodes.size() > 1 ? step_latency(topo, nodes[0][0], nodes[1][0])
                                 : (per_node > 1 ? step_latency(topo, nodes[0][0], nodes[0][1]) : 0);
  out.latency = topo.fabric_profile.launch_latency + step;
  return out;
}

}  // namespace podsim::network
