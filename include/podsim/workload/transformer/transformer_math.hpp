// Closed forms of the GPT-style transformer: parameter counts and FLOPs (Narayanan et al. SC21, Eq. 3).
#pragma once

#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {

// Parameters of one transformer layer: QKV and output projection (4h^2), MLP (2*h*f), biases and the
// two layer norms.
double layer_params(const ModelConfig& m);
// Word + position embeddings.
double embedding_params(const ModelConfig& m);
// The whole model (embeddings shared with the output layer, final layer norm included).
double total_params(const ModelConfig& m);

// FLOPs of one forward pass of one layer over `tokens` tokens: 24*B*s*h^2*(1 + s/(6h)) for f = 4h,
// generalized to any ffn_hidden.
double layer_forward_flops(const ModelConfig& m, double sequences);
// Output-layer (logits) FLOPs of one forward pass: 2*B*s*h*V.
double logits_forward_flops(const ModelConfig& m, double sequences);

// Megatron SC21 Eq. 3: FLOPs of one training step with full activation recomputation,
// 96*B*s*l*h^2*(1 + s/(6h) + V/(16*l*h)), generalized to any ffn_hidden.
double megatron_eq3_flops(const ModelConfig& m, double global_batch);
// Model FLOPs of one training step without recomputation (forward + backward = 3 forward passes).
double model_flops(const ModelConfig& m, double global_batch);
// FLOPs the hardware executes in one step given the recomputation strategy.
double hardware_flops(const ModelConfig& m, double global_batch, Recompute recompute);

}  // namespace podsim::workload
