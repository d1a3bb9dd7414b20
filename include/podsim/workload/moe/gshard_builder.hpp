// GShard mixture-of-experts training step (kind: gshard_moe) -> task graph.
//
// What is folded, and why it is exact: every device runs the same program (dense layers data parallel on
// its own tokens, its own experts on the tokens routed to them; routing is assumed balanced, so every
// expert receives exactly its capacity), so device 0 represents them all on one lane; every device's
// traffic is on the network: the all-to-alls over all devices (folded per link, network/all_to_all.hpp)
// and the gradient all-reduce over all devices.
#pragma once

#include <memory>
#include <string>

#include "podsim/topology/topology.hpp"
#include "podsim/workload/moe/gshard_config.hpp"
#include "podsim/workload/step_plan.hpp"
#include "podsim/workload/workload_model.hpp"

namespace podsim::workload {

// Throws InfeasibleConfig("out_of_memory", ...) when a device cannot hold its share.
StepPlan build_gshard_step(const topology::Topology& topo, const GShardConfig& w);
StepPlan describe_gshard_step(const topology::Topology& topo, const GShardConfig& w);

std::unique_ptr<WorkloadModel> make_gshard_model(const ConfigNode& root, const std::string& file,
                                                 const topology::Topology& topo);

// The summary.csv columns its StepPlan::settings fills (the registry merges every kind's list).
inline std::vector<std::string> gshard_setting_columns() {
  return {"model_params_billion",
          "dp",
          "ep",
          "global_batch",
          "recompute",
          "precision",
          "experts",
          "top_k",
          "capacity_factor",
          "expert_capacity"};
}

}  // namespace podsim::workload
