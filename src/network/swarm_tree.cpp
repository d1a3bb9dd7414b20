#include "podsim/network/swarm_tree.hpp"

#include <algorithm>
#include <stdexcept>

#include "podsim/topology/wafer_cluster.hpp"

namespace podsim::network {
namespace {

const topology::WaferClusterSpec& spec_of(const topology::Topology& topo) {
  if (!topology::is_family<topology::WaferClusterSpec>(topo))
    throw std::logic_error("SwarmX operations need a wafer_cluster topology");
  return *topo.family<topology::WaferClusterSpec>();
}

// Software latency of a cut-through operation over the tree edges from `top` down to system 0: a step per
// edge (the node's forwarding or reduction) plus the wire latency of every edge but the largest, which the
// engine adds itself (it charges each flow its own route, here one edge).
double path_latency(const topology::Topology& topo, int top) {
  topology::Route route;
  topo.router().route(topo.device_vertex[top], topo.device_vertex[0], route);
  double wire = 0, largest = 0, steps = 0;
  for (const auto& hop : route) {
    const auto& link = topo.links[hop.link];
    wire += link.latency;
    largest = std::max(largest, link.latency);
    steps += topo.fabric_profile.step(topology::to_string(link.cls));
  }
  return topo.fabric_profile.launch_latency + steps + wire - largest;
}

plan::CommPlan tree_plan(const topology::Topology& topo, double bytes, bool down, bool with_memoryx) {
  const auto& spec = spec_of(topo);
  plan::CommPhase phase;
  for (auto [parent, child] : spec.tree_edges) {
    if (!with_memoryx && parent == spec.memoryx) continue;
    if (down)
      phase.flows.push_back({parent, child, bytes});
    else
      phase.flows.push_back({child, parent, bytes});
  }
  phase.latency = path_latency(topo, with_memoryx ? spec.memoryx : spec.swarmx.front());
  return {phase};
}

}  // namespace

plan::CommPlan swarm_broadcast(const topology::Topology& topo, double bytes) {
  return tree_plan(topo, bytes, true, true);
}

plan::CommPlan swarm_reduce(const topology::Topology& topo, double bytes) {
  return tree_plan(topo, bytes, false, true);
}

plan::CommPlan swarm_all_reduce(const topology::Topology& topo, double bytes) {
  const auto& spec = spec_of(topo);
  if (spec.systems < 2) return {};
  plan::CommPlan up = tree_plan(topo, bytes, false, false), down = tree_plan(topo, bytes, true, false);
  plan::CommPhase phase = up[0];
  phase.flows.insert(phase.flows.end(), down[0].flows.begin(), down[0].flows.end());
  phase.latency = 2 * up[0].latency - topo.fabric_profile.launch_latency;
  return {phase};
}

}  // namespace podsim::network
