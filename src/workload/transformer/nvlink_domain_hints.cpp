// Hints for groups that should sit on one NVLink domain but do not. Megatron-Core fills servers rank by
// rank (tp, cp, dp, pp), so when a server's GPU count is not a multiple of a group's block of ranks (an
// NVL72 rack holds 72, an expert-parallel group of 64 or a stage of 64 ranks does not divide it) some
// tensor-, context- or expert-parallel groups straddle two domains and their traffic crosses the NICs.
// The run is still what such a job gets; the hint says how many groups straddle and which
// `node.devices_used` keeps every group on one domain.
#include <fmt/format.h>

#include <unordered_set>

#include "megatron_step_builder.hpp"
#include "podsim/topology/families.hpp"

namespace podsim::workload::megatron {
namespace {

// The largest count of GPUs per server, below the server's, that is a multiple of `block` ranks and
// leaves no NIC half used; 0 when there is none.
int devices_used_for(const topology::Topology& topo, int block) {
  int per_nic = static_cast<int>(topo.rail_peers(0).size());  // GPUs sharing device 0's NIC
  for (int used = topo.devices_per_node - 1; used >= block; --used)
    if (used % block == 0 && used % per_nic == 0) return used;
  return 0;
}

}  // namespace

std::vector<std::string> StepBuilder::nvlink_domain_hints() const {
  const auto* gpu = topo_.family<topology::GpuClusterData>();
  if (!gpu || gpu->nvswitch_of_device.empty()) return {};
  int domain = 0;  // devices on one NVLink domain (every domain has as many)
  for (int d : gpu->nvswitch_of_device) domain += d == gpu->nvswitch_of(0);
  struct Kind {
    const char* name;
    int size, block;  // ranks per group; consecutive ranks one group's members lie in
    std::vector<std::vector<int>> groups;
  };
  const auto& p = w_.parallel;
  Kind tp{"tensor-parallel", layout_.tp, layout_.tp, {}},
      cp{"context-parallel", layout_.cp, layout_.tp * layout_.cp, {}};
  Kind ep{"expert-parallel", p.ep, p.ep * p.etp, {}};
  for (int s = 0; s < p_; ++s)
    for (int d = 0; d < layout_.dp; ++d) {
      for (int c = 0; c < layout_.cp && tp.size > 1; ++c) tp.groups.push_back(layout_.tp_group(c, d, s));
      for (int t = 0; t < layout_.tp && cp.size > 1; ++t) cp.groups.push_back(layout_.cp_group(t, d, s));
    }
  if (moe_ && p.ep > 1)
    for (int s = 0; s < p_; ++s)
      for (auto& g : expert_groups(s, ExpertGroups::ep)) ep.groups.push_back(std::move(g));
  std::vector<std::string> hints;
  for (const Kind* k : {&tp, &cp, &ep}) {
    if (k->size <= 1 || k->block > domain) continue;  // cannot fit one domain: crossing it is the layout
    int straddling = 0;
    for (const auto& g : k->groups) {
      std::unordered_set<int> domains;
      for (int d : g) domains.insert(gpu->nvswitch_of(d));
      straddling += domains.size() > 1;
    }
    if (straddling == 0) continue;
    std::string fix;
    int used = domain == topo_.devices_per_node && topo_.installed_devices_per_node == 0
                   ? devices_used_for(topo_, k->block)
                   : 0;
    if (used > 0)
      fix = fmt::format(
          "; on {} of each server's {} GPUs (--set topology.node.devices_used={}) every group "
          "stays on one",
          used, topo_.devices_per_node, used);
    hints.push_back(
        fmt::format("{} of the {} {} groups of {} ranks span two NVLink domains of {} GPUs, so "
                    "their traffic crosses the NICs{}",
                    straddling, k->groups.size(), k->name, k->size, domain, fix));
  }
  return hints;
}

}  // namespace podsim::workload::megatron
