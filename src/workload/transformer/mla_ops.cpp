// Per-rank kernels and TP collectives of the MLA attention half (mla_ops.hpp).
#include "podsim/workload/transformer/mla_ops.hpp"

#include "podsim/workload/transformer/mla_math.hpp"
#include "podsim/workload/transformer/precision_bytes.hpp"

namespace podsim::workload {
namespace {

using calibration::ComputeModel;
using network::CollectiveKind;

struct Dims {
  double h, heads, qk, nope, rope, v, ql, kvl;
  double down_tokens;  // tokens the replicated down-projections see: s/tp with sequence parallelism
};

Dims dims(const ModelConfig& m, const MlaRankShapes& x) {
  Dims d{};
  d.h = static_cast<double>(m.hidden);
  d.heads = static_cast<double>(m.heads) / x.t;  // query (and key/value) heads on this rank
  d.qk = mla_qk_head_dim(m);
  d.nope = static_cast<double>(m.qk_nope_head_dim);
  d.rope = static_cast<double>(m.qk_rope_head_dim);
  d.v = static_cast<double>(m.v_head_dim);
  d.ql = static_cast<double>(m.q_lora_rank);
  d.kvl = static_cast<double>(m.kv_lora_rank);
  d.down_tokens = x.sequence_parallel ? x.sp_tokens : x.tokens;
  return d;
}

void quantize(PassCost& p, const ComputeModel& cm, const char* name, const MlaRankShapes& x,
              double elements) {
  if (x.quantize_bytes > 0) p.add(memory_cost(cm, name, elements * x.quantize_bytes));
}

template <class AddKernels>
void timed(PassCost& p, double& into, AddKernels&& add) {
  double before = p.seconds;
  add();
  into += p.seconds - before;
}

// The fused attention kernel takes one head width; with qk = nope + rope and v = v_head_dim, the width
// (qk + v) / 2 gives exactly its FLOPs (2 q kv (qk + v) per head) and its Q, K, V, O traffic
// (Q and K of qk, V and O of v). Its efficiency is the device profile's, measured at MHA head widths.
calibration::AttentionShape core_shape(const Dims& d, const MlaRankShapes& x) {
  calibration::AttentionShape a;
  a.batch_heads = x.b * d.heads;
  a.kv_batch_heads = a.batch_heads;
  a.q_len = x.q_len;
  a.kv_len = x.kv_len;
  a.head_dim = (d.qk + d.v) / 2;
  a.element_bytes = x.eb;
  a.causal = true;
  return a;
}

OpCost fused(const char* name, const calibration::AttentionEstimate& e) {
  return OpCost{name, true, e.flops, e.bytes, e.seconds};
}

// The fused RoPE of Megatron-Core's MLA (fused_apply_mla_rope_for_q / _for_kv): reads q, the up-projected
// [k_nope, v] and k_rope, rotates the rope parts and writes the attention core's Q, K and V.
double rope_bytes(const Dims& d, const MlaRankShapes& x) {
  double read = d.heads * d.qk + d.heads * (d.nope + d.v) + d.rope;
  double written = d.heads * (2 * d.qk + d.v);
  return x.tokens * (read + written) * x.eb;
}

}  // namespace

void mla_attention_core_forward(PassCost& p, const ModelConfig& m, const ComputeModel& cm,
                                const MlaRankShapes& x) {
  Dims d = dims(m, x);
  double before = p.seconds;
  if (x.flash) {
    p.add(fused("MLA flash attention forward", cm.fused_attention_forward(core_shape(d, x))));
  } else {
    const ComputeModel cm16 = cm.sixteen_bit();
    double heads = x.b * d.heads, attn = heads * x.q_len * x.kv_len;
    p.add(gemm_cost(cm16, "MLA attention scores (QK^T)", x.q_len, x.kv_len, d.qk, heads));
    p.add(memory_cost(cm, "scale-mask-softmax", 2 * attn * x.eb));
    if (x.mask_bytes > 0)
      p.add(memory_cost(cm, "attention dropout", dropout_kernel_bytes(attn, x.eb, x.mask_bytes)));
    p.add(gemm_cost(cm16, "MLA attention over values", x.q_len, d.v, x.kv_len, heads));
  }
  p.attention_seconds += p.seconds - before;
}

void mla_up_projection_forward(PassCost& p, const ModelConfig& m, const ComputeModel& cm,
                               const MlaRankShapes& x, MlaSeconds& s) {
  Dims d = dims(m, x);
  double T = x.tokens;
  quantize(p, cm, "MLA up-projection inputs quantize (fp8)", x, T * (d.ql > 0 ? d.ql : d.h) + T * d.kvl);
  timed(p, s.q_up, [&] {
    if (d.ql > 0)
      p.add(gemm_cost(cm, "MLA q up-projection", T, d.heads * d.qk, d.ql));
    else
      p.add(gemm_cost(cm, "MLA q projection", T, d.heads * d.qk, d.h));
  });
  timed(p, s.kv_up,
        [&] { p.add(gemm_cost(cm, "MLA kv up-projection", T, d.heads * (d.nope + d.v), d.kvl)); });
  p.add(memory_cost(cm, "MLA rotary embedding (fused, q and k_rope)", rope_bytes(d, x)));
}

void mla_attention_forward(PassCost& p, const ModelConfig& m, const ComputeModel& cm, const MlaRankShapes& x,
                           MlaSeconds& s) {
  Dims d = dims(m, x);
  double T = x.tokens, Td = d.down_tokens;
  quantize(p, cm, "MLA down-projection input quantize (fp8)", x, Td * d.h);
  if (d.ql > 0) {
    p.add(gemm_cost(cm, "MLA q down-projection (replicated)", Td, d.ql, d.h));
    p.add(memory_cost(cm, "MLA q latent rmsnorm", 2 * Td * d.ql * x.eb));
  }
  p.add(gemm_cost(cm, "MLA kv down-projection (replicated)", Td, d.kvl + d.rope, d.h));
  p.add(memory_cost(cm, "MLA kv latent rmsnorm", 2 * Td * d.kvl * x.eb));
  mla_up_projection_forward(p, m, cm, x, s);
  mla_attention_core_forward(p, m, cm, x);
  quantize(p, cm, "output projection input quantize (fp8)", x, T * d.heads * d.v);
  timed(p, s.proj, [&] { p.add(gemm_cost(cm, "attention output projection", T, d.h, d.heads * d.v)); });
}

void mla_attention_backward(PassCost& p, const ModelConfig& m, const ComputeModel& cm, const MlaRankShapes& x,
                            MlaSeconds& s) {
  Dims d = dims(m, x);
  double T = x.tokens, Td = d.down_tokens;
  quantize(p, cm, "output projection grad quantize (fp8)", x, T * d.h);
  timed(p, s.proj, [&] {
    linear_backward(p, cm, "output projection dgrad", "output projection wgrad", T, d.h, d.heads * d.v);
  });
  double before = p.seconds;
  if (x.flash) {
    p.add(fused("MLA flash attention backward", cm.fused_attention_backward(core_shape(d, x))));
  } else {
    const ComputeModel cm16 = cm.sixteen_bit();
    double heads = x.b * d.heads, attn = heads * x.q_len * x.kv_len;
    p.add(gemm_cost(cm16, "MLA attention over values dgrad", x.q_len, x.kv_len, d.v, heads));
    p.add(gemm_cost(cm16, "MLA attention over values wgrad", x.kv_len, d.v, x.q_len, heads));
    if (x.mask_bytes > 0)
      p.add(memory_cost(cm, "attention dropout backward", dropout_kernel_bytes(attn, x.eb, x.mask_bytes)));
    p.add(memory_cost(cm, "softmax backward", 3 * attn * x.eb));
    p.add(gemm_cost(cm16, "MLA attention scores dgrad Q", x.q_len, d.qk, x.kv_len, heads));
    p.add(gemm_cost(cm16, "MLA attention scores dgrad K", x.kv_len, d.qk, x.q_len, heads));
  }
  p.attention_seconds += p.seconds - before;
  p.add(memory_cost(cm, "MLA rotary embedding backward (fused)", rope_bytes(d, x)));
  quantize(p, cm, "MLA up-projection grads quantize (fp8)", x, T * d.heads * (d.qk + d.nope + d.v));
  timed(p, s.kv_up, [&] {
    linear_backward(p, cm, "MLA kv up-projection dgrad", "MLA kv up-projection wgrad", T,
                    d.heads * (d.nope + d.v), d.kvl);
  });
  timed(p, s.q_up, [&] {
    linear_backward(p, cm, "MLA q up-projection dgrad", "MLA q up-projection wgrad", T, d.heads * d.qk,
                    d.ql > 0 ? d.ql : d.h);
  });
  p.add(memory_cost(cm, "MLA kv latent rmsnorm backward", 3 * Td * d.kvl * x.eb));
  linear_backward(p, cm, "MLA kv down-projection dgrad", "MLA kv down-projection wgrad", Td, d.kvl + d.rope,
                  d.h);
  if (d.ql > 0) {
    p.add(memory_cost(cm, "MLA q latent rmsnorm backward", 3 * Td * d.ql * x.eb));
    linear_backward(p, cm, "MLA q down-projection dgrad", "MLA q down-projection wgrad", Td, d.ql, d.h);
  }
}

void mla_input_collectives(PassCost& p, const ModelConfig& m, const MlaRankShapes& x, const MlaSeconds& s,
                           bool backward) {
  if (x.t <= 1) return;
  Dims d = dims(m, x);
  double T = x.tokens;
  double q_in = d.ql > 0 ? d.ql : d.h;  // uncompressed queries: W_Q is column-parallel on h
  if (x.sequence_parallel) {
    p.tp.push_back({CollectiveKind::all_gather, T * q_in * x.eb, s.q_up});
    p.tp.push_back({CollectiveKind::all_gather, T * d.kvl * x.eb, s.kv_up});
    p.tp.push_back({CollectiveKind::all_gather, T * d.rope * x.eb, 0});
  } else if (backward) {
    p.tp.push_back({CollectiveKind::all_reduce, T * (q_in + d.kvl + d.rope) * x.eb, 0});
  }
}

}  // namespace podsim::workload
