// A MoE layer's dispatch and combine plans (expert_phases.hpp).
#include "podsim/workload/transformer/expert_phases.hpp"

#include "podsim/network/collective.hpp"
#include "podsim/network/expert_dispatch.hpp"

namespace podsim::workload {

using network::CollectiveKind;

std::vector<std::vector<int>> expert_groups(const ParallelConfig& p, const ParallelLayout& layout, int stage,
                                            ExpertGroups which) {
  const int edp = layout.expert_dp();
  std::vector<std::vector<int>> out;
  int outer = which == ExpertGroups::ep    ? p.etp * edp
              : which == ExpertGroups::etp ? p.ep * edp
                                           : p.etp * p.ep;
  for (int o = 0; o < outer; ++o) {
    if (which == ExpertGroups::ep)
      out.push_back(layout.ep_group(stage, o % p.etp, o / p.etp));
    else if (which == ExpertGroups::etp)
      out.push_back(layout.etp_group(stage, o % p.ep, o / p.ep));
    else
      out.push_back(layout.expert_dp_group(stage, o % p.etp, o / p.etp));
  }
  return out;
}

ExpertPhases expert_phases(const topology::Topology& topo, const WorkloadConfig& w,
                           const ParallelLayout& layout, int stage, const MoeTraffic& t) {
  const auto& p = w.parallel;
  ExpertPhases out;
  // Every group's plan at once (each EP or ETP group of the stage moves the same bytes).
  auto add = [](std::vector<plan::CommPlan>& to, const std::vector<plan::CommPlan>& groups) {
    plan::CommPlan all = network::concurrent(groups);
    if (!all.empty() && !all[0].flows.empty()) to.push_back(all);
  };
  auto over = [&](std::vector<plan::CommPlan>& to, ExpertGroups which, CollectiveKind kind, double bytes) {
    std::vector<plan::CommPlan> groups;
    for (const auto& g : expert_groups(p, layout, stage, which))
      groups.push_back(network::plan_collective(topo, network::make_collective(kind, g, bytes)));
    add(to, groups);
  };
  // flex: DeepEP / HybridEP's two stages (the combine mirrors the dispatch: the same bytes on the same
  // links).
  auto flex = [&](std::vector<plan::CommPlan>& to) {
    std::vector<plan::CommPlan> groups;
    for (const auto& g : expert_groups(p, layout, stage, ExpertGroups::ep))
      groups.push_back({network::plan_hierarchical_dispatch(
          topo, {g, t.flex_to_each_remote_peer, t.flex_to_each_local_peer})});
    add(to, groups);
  };
  bool a2a = w.moe.dispatcher != MoeDispatcher::allgather;
  bool hierarchical = w.moe.dispatcher == MoeDispatcher::flex;
  if (p.ep > 1 && hierarchical) flex(out.dispatch);
  if (p.ep > 1 && !hierarchical)
    over(out.dispatch, ExpertGroups::ep, a2a ? CollectiveKind::all_to_all : CollectiveKind::all_gather,
         t.dispatch_bytes);
  if (p.etp > 1) over(out.dispatch, ExpertGroups::etp, CollectiveKind::all_gather, t.etp_bytes);
  if (p.etp > 1) over(out.combine, ExpertGroups::etp, CollectiveKind::reduce_scatter, t.etp_bytes);
  if (p.ep > 1 && hierarchical) flex(out.combine);
  if (p.ep > 1 && !hierarchical)
    over(out.combine, ExpertGroups::ep, a2a ? CollectiveKind::all_to_all : CollectiveKind::reduce_scatter,
         t.dispatch_bytes);
  return out;
}

}  // namespace podsim::workload
