// The kernels one tensor-parallel rank runs for the attention half of an MLA layer (mla_math.hpp), and its
// tensor-parallel collectives. layer_ops.cpp calls these in place of the QKV projection, the attention core
// and the output projection when model.attention: mla.
//
// How Megatron-Core splits MLA over tensor parallelism (megatron/core/transformer/multi_latent_attention.py,
// MLASelfAttention.__init__ and get_query_key_value_tensors; the TE layer spec builds linear_q_down_proj and
// linear_kv_down_proj as TELinear with parallel_mode='duplicated'):
//   - the down-projections W_DQ and W_DKV are replicated on every TP rank. Without sequence parallelism each
//     rank runs them on all tokens; with it on its s/tp tokens, and the latents c_q, c_kv (and the shared
//     k_rope, gather_from_sequence_parallel_region) are all-gathered before the up-projections: latent-wide
//     all-gathers instead of MHA's hidden-wide one;
//   - the up-projections W_UQ (or W_Q) and W_UKV are column-parallel: heads / tp heads per rank;
//   - the attention core runs on the rank's heads; W_O is row-parallel (reduce-scatter or all-reduce of h);
//   - the latent norms (RMSNorm over q_lora_rank and kv_lora_rank) run where the latents are.
// The backward mirrors this: without sequence parallelism the gradients of the latents (partial sums of the
// column-parallel up-projections' dgrad) are all-reduced (latent-wide), and the replicated down-projection
// then gives the complete dX with no hidden-wide all-reduce (unless queries are uncompressed: W_Q is then
// column-parallel on h).
#pragma once

#include "podsim/calibration/compute_model.hpp"
#include "podsim/workload/transformer/layer_ops.hpp"

namespace podsim::workload {

struct MlaRankShapes {
  double b = 0;          // sequences in the microbatch
  double tokens = 0;     // tokens of the microbatch on this rank (b*s)
  double sp_tokens = 0;  // tokens/tp with sequence parallelism, else tokens
  double q_len = 0, kv_len = 0;
  double t = 1;  // tensor-parallel ranks
  double eb = 2;
  double quantize_bytes = 0;  // per GEMM-input element quantized for an fp8 GEMM (0 otherwise)
  bool flash = false, sequence_parallel = false;
  double mask_bytes = 1;  // dropout mask bytes per attention score (0 without model.dropout: no dropout)
};

// Seconds of the GEMMs each TP collective of the attention half can overlap with (parallel.tp_overlap).
struct MlaSeconds {
  double q_up = 0, kv_up = 0, proj = 0;
};

// Forward and backward of the attention half: down-projections, latent norms, up-projections, RoPE on the
// decoupled part, the attention core (qk head nope + rope, v head v_head_dim) and the output projection.
void mla_attention_forward(PassCost& p, const ModelConfig& m, const calibration::ComputeModel& cm,
                           const MlaRankShapes& x, MlaSeconds& s);
void mla_attention_backward(PassCost& p, const ModelConfig& m, const calibration::ComputeModel& cm,
                            const MlaRankShapes& x, MlaSeconds& s);
// The q and kv up-projections and the fused RoPE (what recompute module mla_up_proj redoes).
void mla_up_projection_forward(PassCost& p, const ModelConfig& m, const calibration::ComputeModel& cm,
                               const MlaRankShapes& x, MlaSeconds& s);
// The attention core alone (what selective recomputation redoes).
void mla_attention_core_forward(PassCost& p, const ModelConfig& m, const calibration::ComputeModel& cm,
                                const MlaRankShapes& x);

// The TP collectives at the input of the attention half (the output projection's reduce-scatter or
// all-reduce is MHA's, of h): with sequence parallelism the all-gathers of c_q, c_kv and k_rope (the
// backward's reduce-scatters of their gradients move the same bytes); without it nothing forward and one
// all-reduce of the latents' gradients backward.
void mla_input_collectives(PassCost& p, const ModelConfig& m, const MlaRankShapes& x, const MlaSeconds& s,
                           bool backward);

}  // namespace podsim::workload
