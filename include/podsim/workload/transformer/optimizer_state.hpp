// What Adam holds per parameter besides the weights the model computes with and their gradients, and what
// its step moves through HBM. Megatron-Core's distributed optimizer keeps an fp32 main copy of the weights
// and fp32 moments: 12 bytes. Its precision-aware optimizer (--use-precision-aware-optimizer, Transformer
// Engine's FusedAdam) stores the moments in bf16 / fp16 / fp8 (--exp-avg-dtype, --exp-avg-sq-dtype) and,
// with bf16 weights, only the 16 low bits of each fp32 main weight (store_param_remainders, on by default
// since Megatron-LM commit f2ece182, 2025-02-10). NeMo 1.x ran Apex's DistributedFusedAdam the same way
// with bf16 O2 (megatron_base_model.py setup_optimization: store_param_remainders) and with no main copy
// when the optimizer's dtype is the model's.
#pragma once

#include "podsim/calibration/compute_model.hpp"
#include "podsim/core/config_node.hpp"
#include "podsim/workload/transformer/layer_ops.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {

// The state Megatron-Core's default optimizer keeps at `precision`: fp32 main weights for 16-bit and fp8
// training, none for fp32 training (the weights are the main copy); fp32 moments.
OptimizerState default_optimizer_state(topology::Precision precision);

// training.main_params (fp32 | fp32_remainders | fp16 | none), training.exp_avg_precision and
// training.exp_avg_sq_precision (fp32 | bf16 | fp16 | fp8), defaulting to default_optimizer_state. A main
// copy beside fp32 weights, or remainders of weights that are not bf16, is an InputError at the key.
OptimizerState read_optimizer_state(const ConfigNode& train, topology::Precision precision);

// Bytes per parameter of the main weights (4, 2 for remainders or fp16, 0 for none) and of the whole state.
double main_param_bytes(const OptimizerState& s);
double optimizer_state_bytes(const OptimizerState& s);

// The optimizer step over `params` parameters whose model copy has `weight_bytes` per element: gradients
// cast to fp32, unscaled and normed, Adam's read and write of the main weights and moments, and the copy of
// the updated main weights into the model's (none with remainders, whose kernel writes the bf16 weight as
// the high half, or without a main copy).
PassCost optimizer_cost(double params, const OptimizerState& s, double weight_bytes,
                        const calibration::ComputeModel& cm);

}  // namespace podsim::workload
