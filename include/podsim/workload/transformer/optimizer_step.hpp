// One pipeline stage's optimizer step as the step builder runs it (megatron_gradients.cpp
// add_optimizer_steps: one compute task after the model-parallel sync, which waits for every stage's
// gradients) and as the plan search's bound adds it after the compute chain (driver/plan_bound.cpp).
#pragma once

#include "podsim/calibration/compute_model.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {

// Seconds of stage `stage`'s optimizer task: Adam over its parameters (the dense ones sharded over the
// ZeRO shard group from ZeRO 1 on, the routed experts over their expert data-parallel group), the memset of
// its gradient buffer (sharded from ZeRO 2 on) and the recast of the updated weights to fp8.
double optimizer_step_seconds(const WorkloadConfig& w, int stage, const calibration::ComputeModel& cm);

}  // namespace podsim::workload
