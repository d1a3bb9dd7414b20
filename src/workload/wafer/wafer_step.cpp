#include "podsim/workload/wafer/wafer_step.hpp"

#include "podsim/workload/transformer/transformer_math.hpp"

namespace podsim::workload {

StepPlan cerebras_step_plan(const CerebrasWorkload& cw, ExecutionMode mode, int micro_batch,
                            const WaferCostModel& cm) {
  const WorkloadConfig& w = cw.w;
  StepPlan plan;
  plan.workload_kind = "transformer_lm";
  plan.devices = w.parallel.dp;
  plan.tokens_per_step = static_cast<double>(w.training.global_batch) * w.model.seq_len;
  plan.samples_per_step = static_cast<double>(w.training.global_batch);
  plan.hardware_flops =
      hardware_flops(w.model, static_cast<double>(w.training.global_batch), w.training.recompute);
  plan.model_flops = model_flops(w.model, static_cast<double>(w.training.global_batch));
  plan.peak_flops = cm.peak_flops();
  plan.settings = cerebras_settings(cw, mode, micro_batch);
  return plan;
}

}  // namespace podsim::workload
