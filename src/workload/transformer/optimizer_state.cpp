#include "podsim/workload/transformer/optimizer_state.hpp"

#include <fmt/format.h>

#include "podsim/core/config_choice.hpp"
#include "podsim/workload/transformer/precision_bytes.hpp"

namespace podsim::workload {
namespace {

double moment_bytes(const ConfigNode& train, const char* key) {
  std::string v = train.choice_or(key, {"fp32", "bf16", "fp16", "fp8"}, "fp32");
  return v == "fp32" ? 4 : v == "fp8" ? 1 : 2;
}

}  // namespace

// The model's own weights are activation_bytes wide: 16 bits for bf16 / fp16 and the fp8 family (Transformer
// Engine keeps bf16 weights and quantizes them per GEMM), 32 for fp32 / tf32.
OptimizerState default_optimizer_state(topology::Precision precision) {
  OptimizerState s;
  s.main_params = activation_bytes(precision) < 4 ? MainParams::fp32 : MainParams::none;
  return s;
}

OptimizerState read_optimizer_state(const ConfigNode& train, topology::Precision precision) {
  OptimizerState s = default_optimizer_state(precision);
  s.main_params = choice_or(train, "main_params", kMainParamsNames, s.main_params);
  std::string p = topology::to_string(precision);
  if (activation_bytes(precision) >= 4 && s.main_params != MainParams::none)
    train.fail(
        "main_params",
        fmt::format("training.precision {} keeps the weights in 32 bits, which are the optimizer's main "
                    "copy: main_params: none (the default at this precision)",
                    p));
  if (s.main_params == MainParams::fp32_remainders && precision == topology::Precision::fp16)
    train.fail(
        "main_params",
        "fp32_remainders needs bf16 weights (an fp32 number's high 16 bits are its bf16 value, not its "
        "fp16 one); with fp16 training use fp32, fp16 or none");
  s.exp_avg_bytes = moment_bytes(train, "exp_avg_precision");
  s.exp_avg_sq_bytes = moment_bytes(train, "exp_avg_sq_precision");
  return s;
}

double main_param_bytes(const OptimizerState& s) {
  switch (s.main_params) {
    case MainParams::fp32: return 4;
    case MainParams::fp32_remainders:
    case MainParams::fp16: return 2;
    case MainParams::none: return 0;
  }
  return 4;
}

double optimizer_state_bytes(const OptimizerState& s) {
  return main_param_bytes(s) + s.exp_avg_bytes + s.exp_avg_sq_bytes;
}

PassCost optimizer_cost(double params, const OptimizerState& s, double weight_bytes,
                        const calibration::ComputeModel& cm) {
  PassCost p;
  // Megatron's mixed-precision optimizer per parameter: copy the 16-bit gradients into fp32 (2 + 4), unscale
  // and inf check (4), grad-norm (4).
  p.add(memory_cost(cm, "optimizer: grads to fp32, unscale, norm", params * (6 + 4 + 4)));
  // Adam reads the fp32 gradient and reads and writes the main weights and both moments. Remainders are
  // updated with their bf16 high half (2 + 2 bytes each way); without a main copy the kernel updates the
  // model's weights.
  double main = s.main_params == MainParams::fp32_remainders ? 2 + weight_bytes
                : s.main_params == MainParams::none          ? weight_bytes
                                                             : main_param_bytes(s);
  p.add(memory_cost(cm, "optimizer: Adam update",
                    params * (4 + 2 * (main + s.exp_avg_bytes + s.exp_avg_sq_bytes))));
  if (s.main_params == MainParams::fp32 || s.main_params == MainParams::fp16)
    p.add(memory_cost(cm, "optimizer: copy master weights", params * (main_param_bytes(s) + weight_bytes)));
  return p;
}

}  // namespace podsim::workload
