// NVLSTree all_reduce as NCCL runs it across NVLink domains (NCCL_ALGO=NVLSTree, NCCL's usual choice for
// large all_reduce across servers of an NVLink-SHARP fabric; NVIDIA/nccl issue 919: "NVLSTree is NVLink
// SHARP within the node and Tree between nodes"). Inside each domain the NVSwitch reduces and multicasts
// as in plan_nvls (S (1 + 1/n) per GPU port and direction); across domains one head GPU per rail channel
// runs NCCL's double binary tree with its 1/channels of the domain-reduced buffer. Pipelined: one phase.
// The intra-domain part is constant in the number of servers and the tree logarithmic, so it reaches its
// peak at scale where rings degrade (NVIDIA/nccl issue 1649, maintainer).
#include <fmt/format.h>

#include <cmath>

#include "collective_planners.hpp"
#include "podsim/core/error.hpp"
#include "podsim/topology/families.hpp"

namespace podsim::network {

using topology::Topology;

namespace {

// The group's members per NVLink domain, domains in order of first appearance.
std::vector<std::vector<int>> members_by_domain(const topology::GpuClusterData& gpu,
                                                const std::vector<int>& group) {
  return members_by(group, [&](int d) { return gpu.nvswitch_of(d); });
}

}  // namespace

bool nvls_tree_available(const Topology& topo, const Collective& c) {
  const auto* gpu = topo.family<topology::GpuClusterData>();
  if (!gpu || gpu->nvswitch_of_device.empty() || !topo.fabric_profile.protocol("nvls_tree", "simple") ||
      !topo.fabric_profile.protocol("nvls", "simple"))  // the NVLS part runs at the nvls factor
    return false;
  auto domains = members_by_domain(*gpu, c.group);
  if (domains.size() < 2) return false;  // one domain: plain NVLS
  for (const auto& members : domains)
    if (members.size() < 2) return false;  // NVLS needs two GPUs on the switch
  return true;
}

plan::CommPlan plan_nvls_tree(const Topology& topo, const Collective& c) {
  if (!nvls_tree_available(topo, c))
    throw InputError(fmt::format(
        "algorithm nvls_tree (NVLink SHARP inside each NVLink domain, a tree across them) needs a group "
        "with at least two ranks on each of two or more NVLink domains of a topology whose fabric profile "
        "has `protocols: nvls_tree:`; {} does not offer that for this group",
        topo.name));
  const auto* gpu = topo.family<topology::GpuClusterData>();
  auto domains = members_by_domain(*gpu, c.group);
  const int count = static_cast<int>(domains.size());
  const int channels = rail_channels(topo, domains);
  // Steps: reduce and multicast through the switch, up and down the tree's depth across domains.
  const double depth = std::floor(std::log2(count));
  auto terms = protocol_terms(topo, "nvls_tree", Protocol::simple, 2 + 2 * depth, 2 * depth);
  // Inside a domain the switch's reduction rate bounds the NVLS part as it bounds plan_nvls: the nvls
  // bandwidth factor there, the nvls_tree one on the tree.
  const double switch_scale = protocol_terms(topo, "nvls", Protocol::simple, 0, 0).byte_scale;
  plan::CommPhase phase;
  for (const auto& members : domains) add_nvls_domain(phase, topo, members, c.bytes * switch_scale);
  const double share = c.bytes * terms.byte_scale / (2 * channels);  // two trees per channel
  for (int ch = 0; ch < channels; ++ch) {
    std::vector<int> heads;
    for (const auto& members : domains) heads.push_back(members[ch * members.size() / channels]);
    add_server_trees(phase, heads, share);
  }
  phase.latency = terms.latency;
  return {phase};
}

}  // namespace podsim::network
