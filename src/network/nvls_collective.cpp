// NVLink SHARP (NVLS) all_reduce as NCCL runs it inside one NVLink domain (NCCL_ALGO=NVLS; NVSwitch3 on
// Hopper, the NVLink5 switch on Blackwell). The switch reduces and multicasts: every GPU owns 1/n of the
// buffer, pulls that share reduced by the switch out of all n GPUs (multimem.ld_reduce: each GPU's port
// carries its whole buffer into the switch, the reduced share back out) and stores it once into the
// switch, which multicasts it to all n GPUs (multimem.st). Per GPU and direction that is S (1 + 1/n)
// bytes against the ring's 2 S (n-1)/n, so NVLS's busbw is 2(n-1)/(n+1) x the port bandwidth against the
// ring's 1x: flows from every GPU into its NVSwitch vertex and back, routed over the GPU's NVLink port.
// The switch's reduction rate and NCCL's fewer NVLS channels are the profile's nvls bandwidth_factor.
// Across servers (NCCL's multi-node NVLS, with InfiniBand SHARP) each server reduces this way and its ranks'
// shares meet in the SHARP trees of collnet_collective.cpp.
#include <fmt/format.h>

#include <set>

#include "collective_planners.hpp"
#include "podsim/core/error.hpp"
#include "podsim/topology/families.hpp"

namespace podsim::network {

using topology::Topology;

namespace {

bool one_domain(const topology::GpuClusterData& gpu, const Collective& c) {
  int sw = gpu.nvswitch_of(c.group.front());
  for (int d : c.group)
    if (gpu.nvswitch_of(d) != sw) return false;
  return true;
}

// Across servers NVLS needs the InfiniBand switches to reduce too (CollNet between the servers): every
// server its own NVLink domain with two or more ranks, and a SHARP tree per rank position.
bool multi_node(const Topology& topo, const Collective& c) {
  const auto* gpu = topo.family<topology::GpuClusterData>();
  if (!topo.fabric_profile.protocol("collnet", "simple")) return false;
  auto nodes = members_by_node(topo, c.group);
  std::set<int> switches;
  for (const auto& members : nodes) {
    if (members.size() < 2) return false;
    for (int d : members) switches.insert(gpu->nvswitch_of(d));
  }
  return switches.size() == nodes.size() && sharp_available(topo, nodes);
}

}  // namespace

void add_nvls_domain(plan::CommPhase& phase, const Topology& topo, const std::vector<int>& members,
                     double bytes) {
  const int sw = topo.family<topology::GpuClusterData>()->nvswitch_of(members.front());
  const double per_direction = bytes * (1.0 + 1.0 / static_cast<double>(members.size()));
  for (int d : members) {
    phase.flows.push_back(plan::to_switch(d, sw, per_direction));
    phase.flows.push_back(plan::from_switch(sw, d, per_direction));
  }
}

bool nvls_available(const Topology& topo, const Collective& c) {
  const auto* gpu = topo.family<topology::GpuClusterData>();
  if (!gpu || gpu->nvswitch_of_device.empty() || c.group.size() < 2) return false;
  if (!topo.fabric_profile.protocol("nvls", "simple")) return false;  // the fabric has no NVLS
  return one_domain(*gpu, c) || multi_node(topo, c);
}

plan::CommPlan plan_nvls(const Topology& topo, const Collective& c) {
  if (!nvls_available(topo, c))
    throw InputError(fmt::format(
        "algorithm nvls (NVLink SHARP) needs every rank on one NVLink domain of a topology whose fabric "
        "profile has `protocols: nvls:` (NVSwitch with in-switch reduction: Hopper, Blackwell), or, across "
        "servers, InfiniBand SHARP under them (`fabric.in_network_reduction: sharp`) with two or more ranks "
        "per server; {} has {}",
        topo.name,
        topo.fabric_profile.protocol("nvls", "simple") ? "this group spread over several NVLink domains"
                                                       : "no NVLS in its fabric profile"));
  const auto* gpu = topo.family<topology::GpuClusterData>();
  // Two steps through the switch (reduce, multicast); only Simple exists.
  auto terms = protocol_terms(topo, "nvls", Protocol::simple, 2, 0);
  const auto domains =
      one_domain(*gpu, c) ? std::vector<std::vector<int>>{c.group} : members_by_node(topo, c.group);
  plan::CommPhase phase;
  for (const auto& members : domains) add_nvls_domain(phase, topo, members, c.bytes * terms.byte_scale);
  phase.latency = terms.latency;
  if (domains.size() > 1) {  // CollNet between the servers: each rank's reduced 1/m share through SHARP
    auto net = protocol_terms(topo, "collnet", Protocol::simple, 0, 0);
    const double share = c.bytes * net.byte_scale / domains.front().size();
    const int tiers = add_sharp_trees(phase, topo, domains, share);
    phase.latency += protocol_terms(topo, "collnet", Protocol::simple, 2.0 * tiers, 2.0 * tiers).latency;
  }
  return {phase};
}

}  // namespace podsim::network
