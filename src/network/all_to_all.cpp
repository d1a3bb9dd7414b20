#include "podsim/network/all_to_all.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "collective_planners.hpp"
#include "podsim/core/error.hpp"
#include "podsim/network/collective.hpp"
#include "podsim/network/torus_collectives.hpp"

namespace podsim::network {

bool whole_servers_with_own_nics(const topology::Topology& topo, const std::vector<std::vector<int>>& nodes) {
  for (const auto& members : nodes) {
    if (static_cast<int>(members.size()) != topo.devices_per_node) return false;
    for (int d : members)  // NICs shared by devices: PXN relays differ
      if (topo.rail_of(d) < 0 || topo.rail_peers(d).size() != 1) return false;
  }
  return true;
}

namespace {

using topology::Topology;

// Servers of the group, each with all of its devices in the group, or empty when the group does not
// consist of whole servers with one NIC per device.
std::vector<int> whole_servers(const Topology& topo, const std::vector<int>& group) {
  auto nodes = members_by_node(topo, group);
  if (nodes.size() < 2 || !whole_servers_with_own_nics(topo, nodes)) return {};
  std::vector<int> servers;
  for (const auto& members : nodes) servers.push_back(topo.node_of(members.front()));
  std::sort(servers.begin(), servers.end());
  return servers;
}

}  // namespace

FoldedAllToAll folded_all_to_all(const Topology& topo, const std::vector<int>& group, double bytes_per_rank) {
  FoldedAllToAll out;
  const int n = static_cast<int>(group.size());
  if (n < 2 || bytes_per_rank <= 0) return out;
  const double per_pair = bytes_per_rank / n;
  if (const auto* torus = topo.family<topology::TorusGeometry>()) {
    out.phase = torus_all_to_all(topo, *torus, group, bytes_per_rank);
    out.fold = fmt::format(
        "all-to-all over {} ranks as {} per-link flows: each ICI link direction carries exactly the load "
        "of the {} pairwise dimension-order routes",
        n, out.phase.flows.size(), static_cast<long long>(n) * (n - 1));
    return out;
  }
  std::vector<int> servers = whole_servers(topo, group);
  if (!servers.empty()) {
    const int G = topo.devices_per_node;
    const int S = static_cast<int>(servers.size());
    double max_step = 0;
    // Inside a server: every server's NVLink ports carry the same load and belong to it alone, so the
    // first server stands for all.
    int first = servers.front() * G;
    for (int g = 0; g < G; ++g)
      for (int h = 0; h < G; ++h)
        if (g != h) out.phase.flows.push_back({first + g, first + h, S * per_pair});
    for (int a : servers) {
      for (int b : servers) {  // rail 0 stands for every rail
        if (a == b) continue;
        int src = a * G + 0, dst = b * G + 0;
        out.phase.flows.push_back({src, dst, G * per_pair});
      }
    }
    max_step = step_latency(topo, servers[0] * G, servers[1] * G + 1);
    out.phase.latency = topo.fabric_profile.launch_latency + max_step;
    out.fold = fmt::format(
        "all-to-all over {} servers x {} GPUs as {} flows: the first server's NVLink flows carry each GPU's "
        "own and PXN-relayed shares and stand for every server's; rail 0's inter-server flows stand for "
        "every "
        "rail (rails share no InfiniBand link)",
        S, G, out.phase.flows.size());
    return out;
  }
  if (n > 512)
    throw InputError(fmt::format(
        "an all-to-all over {} ranks that are not whole servers of {} would be {} flows; podsim folds it "
        "only on tori and for whole servers with one NIC per device: use a multiple of {} devices",
        n, topo.name, static_cast<long long>(n) * n, topo.devices_per_node));
  Collective c;
  c.kind = CollectiveKind::all_to_all;
  c.group = group;
  c.bytes = bytes_per_rank;
  c.algorithm = Algorithm::direct;
  out.phase = plan_collective(topo, c).front();
  out.fold =
      fmt::format("all-to-all over {} ranks as {} pairwise flows (no fold)", n, out.phase.flows.size());
  return out;
}

}  // namespace podsim::network
