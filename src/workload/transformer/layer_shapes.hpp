#pragma once
// The per-rank shapes of one transformer layer and the head layers for one microbatch (internal to the
// transformer kind: layer_ops.cpp costs the layer's kernels from them, head_ops.cpp the embedding, the
// output layer and the optimizer).
#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {

struct LayerShapes {
  double b, s, h, f, t, v, eb;
  double heads_per_rank;              // query heads a/t
  double head_dim;                    // d
  double qkv_width;                   // columns of this rank's QKV GEMM: (a + 2g) * d / t
  double attention_width;             // this rank's attention output: a * d / t
  double fc1_width;                   // columns of this rank's fc1: f/t, or 2f/t with SwiGLU (gate and up)
  double quantize_bytes;              // per GEMM-input element quantized for an fp8 GEMM (0 otherwise)
  double fused_norm_quantize_bytes;   // the same for the QKV / fc1 inputs, after TE's fused norm
  double fused_norm_bytes;            // per element that fused norm writes (precision_bytes.hpp)
  double gather_bytes;                // per element of a GEMM operand a TP all-gather moves (quantized)
  double accumulate_bytes_per_param;  // gradient accumulation traffic per parameter per microbatch
  double tokens;     // b*s/cp: the tokens of the micro-batch this rank holds (context parallelism splits s)
  double sp_tokens;  // tokens held per rank in the regions sequence parallelism splits
  // Attention core per rank: queries of its s/cp tokens against the keys of the whole sequence (context
  // parallelism; with cp = 1 both are s). Causal load balancing (2*cp chunks, rank i holds chunks i and
  // 2cp-1-i) gives every rank the same share, 1/cp, of the causal work.
  double q_len, kv_len;
  double attn;               // attention score elements per rank: b * (a/t) * q_len * kv_len
  double kv_heads_per_rank;  // g/t
  bool flash;                // one fused attention kernel (training.attention: flash)
  // Bytes of dropout mask per element a dropout writes and its backward reads: 1 (uint8) with
  // model.dropout > 0; 0 without, where PyTorch's dropout returns its input (no kernel, no mask).
  double mask_bytes;
  bool dropout() const { return mask_bytes > 0; }
  // The sliding window this layer's attention uses (model.sliding_window), 0 for full attention:
  // layer_costs sets it for the windowed layers.
  double window = 0;
};

LayerShapes layer_shapes(const WorkloadConfig& w, int micro_batch);

}  // namespace podsim::workload
