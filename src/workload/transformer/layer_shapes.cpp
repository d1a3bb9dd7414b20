#include "layer_shapes.hpp"

#include "podsim/workload/transformer/precision_bytes.hpp"

namespace podsim::workload {

LayerShapes layer_shapes(const WorkloadConfig& w, int micro_batch) {
  const auto& m = w.model;
  LayerShapes x{};
  x.b = micro_batch;
  x.s = static_cast<double>(m.seq_len);
  x.h = static_cast<double>(m.hidden);
  x.f = static_cast<double>(m.ffn_hidden);
  x.t = w.parallel.tp;
  x.v = static_cast<double>(m.vocab);
  x.eb = activation_bytes(w.training);  // bf16 under fp8: only GEMM operands are quantized
  x.heads_per_rank = static_cast<double>(m.heads) / x.t;
  x.head_dim = static_cast<double>(m.dim());
  x.qkv_width = static_cast<double>(m.heads + 2 * m.query_groups()) * x.head_dim / x.t;
  x.attention_width = x.heads_per_rank * x.head_dim;
  x.fc1_width = (m.mlp == Mlp::swiglu ? 2 : 1) * x.f / x.t;
  x.quantize_bytes = quantize_bytes_per_element(w.training);
  x.fused_norm_quantize_bytes = quantize_bytes_per_element(w.training, GemmInput::fused_norm_output);
  x.fused_norm_bytes = fused_norm_bytes(w.training);
  x.gather_bytes = gathered_operand_bytes(w.training);
  double cp = w.parallel.cp;
  x.tokens = x.b * x.s / cp;
  x.sp_tokens = w.parallel.sequence_parallel ? x.tokens / x.t : x.tokens;
  x.q_len = x.s / cp;
  x.kv_len = x.s;
  x.attn = x.b * x.heads_per_rank * x.q_len * x.kv_len;
  x.kv_heads_per_rank = static_cast<double>(m.query_groups()) / x.t;
  x.flash = w.training.attention == Attention::flash;
  x.mask_bytes = dropout_mask_bytes(w.model);
  // Summing this microbatch's weight gradients into the running total: read the new gradient and
  // read-modify-write the fp32 buffer (10 bytes), or read-modify-write in the parameter precision
  // (3 accesses, skipped for the first microbatch), or nothing when fused into the wgrad GEMM.
  double microbatches =
      static_cast<double>(w.training.global_batch) / (static_cast<double>(w.parallel.dp) * micro_batch);
  switch (w.training.grad_accumulation) {
    case GradAccumulation::fp32: x.accumulate_bytes_per_param = x.eb + 8; break;
    case GradAccumulation::same:
      x.accumulate_bytes_per_param = 3 * x.eb * (microbatches - 1) / microbatches;
      break;
    case GradAccumulation::fused: x.accumulate_bytes_per_param = 0; break;
  }
  return x;
}

}  // namespace podsim::workload
