// Closed forms of the transformer layer: parameter counts and FLOPs (Narayanan et al. SC21, Eq. 3),
// generalized to grouped-query attention (kv_heads), any head_dim, SwiGLU / squared-ReLU MLPs, RMSNorm,
// untied output layers and rotary positions.
#pragma once

#include <optional>
#include <vector>

#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {

// Parameters of one transformer layer: Q (h*a*d), K and V (2*h*g*d), output projection (a*d*h), the MLP
// (2*h*f, or 3*h*f for SwiGLU), biases with linear_bias, and the two norms (2h each for LayerNorm, h for
// RMSNorm).
double layer_params(const ModelConfig& m);
// Word embedding, plus the position table with learned positions (RoPE has none).
double embedding_params(const ModelConfig& m);
// The output layer's own weights: 0 when tied to the word embedding, vocab*h otherwise.
double output_layer_params(const ModelConfig& m);
// Parameters of the final norm.
double final_norm_params(const ModelConfig& m);
// The whole model: layers, embeddings, final norm and an untied output layer.
double total_params(const ModelConfig& m);

// FLOPs of one forward pass of one layer over `sequences` sequences: 24*B*s*h^2*(1 + s/(6h)) for GPT-3
// (f = 4h, MHA); in general 2*B*s*(GEMM weights) + 4*B*s^2*a*d for the attention scores and values.
// `causal` halves the s^2 terms, counting only the unmasked half of the score matrix.
double layer_forward_flops(const ModelConfig& m, double sequences, bool causal = false);
// The forward FLOPs of all m.layers main-model layers (not the MTP layers): layers x layer_forward_flops,
// with the sliding-window layers' attention over the pairs of their window under the causal count.
double layers_forward_flops(const ModelConfig& m, double sequences, bool causal = false);
// The attention core's forward FLOPs (scores and values) of every layer, MTP layers included.
double attention_core_forward_flops(const ModelConfig& m, double sequences, bool causal);
// Sliding-window attention (model.sliding_window): whether layer `layer` (0-based) uses the window
// (Megatron-Core: 1-based layer numbers that full_attention_every divides keep full attention), and how
// many of the `count` layers from `first` do.
bool windowed_layer(const ModelConfig& m, long long layer);
long long windowed_layers_in(const ModelConfig& m, long long first, long long count);
// The model.full_attention_every that gives this per-layer pattern (true: a sliding-window layer), 0 when
// every layer uses the window; nullopt when no period does (HF layer_types, Megatron-Core's list form of
// window_attn_skip_freq).
std::optional<int> full_attention_every_of(const std::vector<bool>& windowed);
// Output-layer (logits) FLOPs of one forward pass: 2*B*s*h*V.
double logits_forward_flops(const ModelConfig& m, double sequences);

// Megatron SC21 Eq. 3: FLOPs of one training step with full activation recomputation,
// 96*B*s*l*h^2*(1 + s/(6h) + V/(16*l*h)), generalized as layer_forward_flops.
double megatron_eq3_flops(const ModelConfig& m, double global_batch);
// Model FLOPs of one training step without recomputation (forward + backward = 3 forward passes), with
// attention counted over the full s x s score matrix (SC21 Eq. 3's convention; what `mfu` uses).
double model_flops(const ModelConfig& m, double global_batch);
// The same with causal attention (s^2 terms halved), as NVIDIA's NeMo FLOPs formulas count.
double model_flops_causal(const ModelConfig& m, double global_batch);
// FLOPs the hardware executes in one step given the recomputation strategy and the attention kernel:
// unfused attention computes the full s x s scores (the mask is applied after); flash attention skips the
// masked half (the causal count) and its backward recomputes the scores inside the kernel (2.5x the
// forward's attention FLOPs instead of 2x).
double hardware_flops(const ModelConfig& m, double global_batch, Recompute recompute,
                      Attention attention = Attention::unfused);

}  // namespace podsim::workload
