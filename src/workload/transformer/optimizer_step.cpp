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

// Megatron-Core zeroes the whole gradient buffer (DistributedDataParallel.zero_grad_buffer, called by
// megatron/training/training.py train_step at the start of every iteration): one memset of the stage's
// gradients as stage_memory counts them (sharded from ZeRO 2 on). Charged with the optimizer step, the
// previous iteration's end in the steady state one step stands for.
double zero_grad_seconds(const WorkloadConfig& w, int stage, double shard,
                         const calibration::ComputeModel& cm) {
  double experts = expert_stage_params(w, stage), edp = expert_data_parallel(w.parallel);
  bool sharded = w.parallel.zero >= 2;
  double grads = (stage_params(w, stage) - experts) / (sharded ? shard : 1) + experts / (sharded ? edp : 1);
  return memory_cost(cm, "zero gradient buffer", grads * w.training.main_grad_bytes).seconds;
}

}  // namespace

double optimizer_step_seconds(const WorkloadConfig& w, int stage, const calibration::ComputeModel& cm) {
  const double shard = rank_layout(w.parallel).shard_ranks();
  double experts = expert_stage_params(w, stage), edp = expert_data_parallel(w.parallel);
  bool sharded = w.parallel.zero >= 1;
  double params = (stage_params(w, stage) - experts) / (sharded ? shard : 1) + experts / (sharded ? edp : 1);
  return optimizer_cost(params, w.training.optimizer, activation_bytes(w.training), cm).seconds +
         zero_grad_seconds(w, stage, shard, cm) +
         // the next step's first forward recasts the updated weights to fp8
         fp8_weight_cast_seconds(w, stage, cm);
}

}  // namespace podsim::workload
