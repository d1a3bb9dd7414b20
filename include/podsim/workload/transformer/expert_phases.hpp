// One MoE layer's token dispatch and combine as network plans, every expert group of a pipeline stage at
// once: the step builder runs them (moe_step.cpp) and the plan search's bound loads the fabric with them
// (driver/plan_bound.cpp), so both follow the same groups, collectives and bytes.
#pragma once

#include <vector>

#include "podsim/plan/flow.hpp"
#include "podsim/topology/topology.hpp"
#include "podsim/workload/parallel_layout.hpp"
#include "podsim/workload/transformer/moe_costs.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {

// The expert groups of stage `stage` as Megatron-Core lays them out (etp -> ep -> expert data parallel):
// Ep, one per (etp rank, expert-dp rank); Etp, one per (ep rank, expert-dp rank); ExpertData, one per
// (etp rank, ep rank).
enum class ExpertGroups { ep, etp, expert_data };
std::vector<std::vector<int>> expert_groups(const ParallelConfig& p, const ParallelLayout& layout, int stage,
                                            ExpertGroups which);

// Dispatch: the EP all-to-all (or all-gather, or the flex dispatcher's two stages: network/expert_dispatch),
// then the ETP all-gather; combine: the ETP reduce-scatter, then the EP all-to-all (or reduce-scatter, or
// the flex stages, which mirror the dispatch). Each plan holds every group of the stage concurrently; a
// step with ep = etp = 1 has none.
struct ExpertPhases {
  std::vector<plan::CommPlan> dispatch, combine;
};
ExpertPhases expert_phases(const topology::Topology& topo, const WorkloadConfig& w,
                           const ParallelLayout& layout, int stage, const MoeTraffic& t);

}  // namespace podsim::workload
