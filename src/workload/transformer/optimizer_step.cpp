// One stage's optimizer step (optimizer_step.hpp).
#include "podsim/workload/transformer/optimizer_step.hpp"

#include "podsim/workload/transformer/fp8_weight_ops.hpp"
#include "podsim/workload/transformer/layer_ops.hpp"
#include "podsim/workload/transformer/memory_model.hpp"
#include "podsim/workload/transformer/moe_memory.hpp"
#include "podsim/workload/transformer/optimizer_state.hpp"
#include "podsim/workload/transformer/precision_bytes.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"

namespace podsim::workload {

namespace {

// A stage's parameters on one rank: the dense ones over `shard` ranks and the routed experts over their
// expert data-parallel group where `sharded`, all of them otherwise.
double local_params(const WorkloadConfig& w, int stage, double shard, bool sharded) {
  double experts = expert_stage_params(w, stage), edp = expert_data_parallel(w.parallel);
  return (stage_params(w, stage) - experts) / (sharded ? shard : 1) + experts / (sharded ? edp : 1);
}

}  // namespace

double optimizer_step_seconds(const WorkloadConfig& w, int stage, const calibration::ComputeModel& cm) {
  const double shard = rank_layout(w.parallel).shard_ranks();
  double params = local_params(w, stage, shard, w.parallel.zero >= 1);
  // Megatron-Core zeroes the whole gradient buffer (DistributedDataParallel.zero_grad_buffer, called by
  // megatron/training/training.py train_step at the start of every iteration): one memset of the stage's
  // gradients as stage_memory counts them (sharded from ZeRO 2 on). Charged with the optimizer step, the
  // previous iteration's end in the steady state one step stands for.
  double grads = local_params(w, stage, shard, w.parallel.zero >= 2);
  return optimizer_cost(params, w.training.optimizer, activation_bytes(w.training), cm).seconds +
         memory_cost(cm, "zero gradient buffer", grads * w.training.main_grad_bytes).seconds +
         // the next step's first forward recasts the updated weights to fp8
         fp8_weight_cast_seconds(w, stage, cm);
}

}  // namespace podsim::workload
