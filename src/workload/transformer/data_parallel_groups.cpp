// A stage's data-parallel groups and collectives (data_parallel_groups.hpp).
#include "podsim/workload/transformer/data_parallel_groups.hpp"

namespace podsim::workload {

using network::CollectiveKind;

network::Collective data_parallel_collective(const ParallelConfig& p, CollectiveKind kind,
                                             std::vector<int> group, double bytes) {
  auto c = network::make_collective(kind, std::move(group), bytes);
  if (kind != CollectiveKind::all_gather) c.algorithm = network::parse_algorithm(p.dp_algorithm);
  return c;
}

std::vector<std::vector<int>> data_parallel_groups(const ParallelLayout& layout,
                                                   const std::vector<int>& tp_ranks, int stage,
                                                   DataParallelGroups which) {
  std::vector<std::vector<int>> out;
  for (int r : tp_ranks) {
    if (which == DataParallelGroups::shard)
      for (int i = 0; i < layout.shard_groups(); ++i) out.push_back(layout.shard_group(r, stage, i));
    else if (layout.shard_groups() > 1)
      for (int j = 0; j < layout.shard_ranks(); ++j) out.push_back(layout.replica_group(r, stage, j));
  }
  return out;
}

plan::CommPlan data_parallel_plan(const topology::Topology& topo, const ParallelConfig& p,
                                  const ParallelLayout& layout, const std::vector<int>& tp_ranks, int stage,
                                  DataParallelGroups which, CollectiveKind kind, double bytes) {
  std::vector<plan::CommPlan> plans;
  for (auto& group : data_parallel_groups(layout, tp_ranks, stage, which))
    plans.push_back(
        network::plan_collective(topo, data_parallel_collective(p, kind, std::move(group), bytes)));
  return network::concurrent(plans);
}

}  // namespace podsim::workload
