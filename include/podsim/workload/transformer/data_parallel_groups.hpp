// A stage's data-parallel groups and collectives as the step builder runs them (megatron_gradients.cpp:
// gradient reductions and parameter gathers; moe_step.cpp: the experts') and as the plan search's bound
// loads the fabric with them (driver/plan_bound.cpp, plan_refine.cpp), so both follow the same groups and
// algorithms.
#pragma once

#include <vector>

#include "podsim/network/collective.hpp"
#include "podsim/topology/topology.hpp"
#include "podsim/workload/parallel_layout.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {

// One data-parallel collective: reductions run parallel.dp_algorithm, parameter all-gathers NCCL's own
// choice.
network::Collective data_parallel_collective(const ParallelConfig& p, network::CollectiveKind kind,
                                             std::vector<int> group, double bytes);

// Of stage `stage`, for each of `tp_ranks` (the tp ranks the builder simulates, simulated_tp_ranks): its
// shard groups (the whole dp x cp gradient group without HSDP) or HSDP's replica groups (none without).
enum class DataParallelGroups { shard, replica };
std::vector<std::vector<int>> data_parallel_groups(const ParallelLayout& layout,
                                                   const std::vector<int>& tp_ranks, int stage,
                                                   DataParallelGroups which);

// One collective in every such group at once; empty where no group has two ranks.
plan::CommPlan data_parallel_plan(const topology::Topology& topo, const ParallelConfig& p,
                                  const ParallelLayout& layout, const std::vector<int>& tp_ranks, int stage,
                                  DataParallelGroups which, network::CollectiveKind kind, double bytes);

}  // namespace podsim::workload
