#include "podsim/workload/transformer/layer_ops.hpp"

#include "layer_shapes.hpp"
#include "podsim/workload/transformer/gemm_accumulation.hpp"
#include "podsim/workload/transformer/mla_math.hpp"
#include "podsim/workload/transformer/mla_ops.hpp"
#include "podsim/workload/transformer/precision_bytes.hpp"
#include "podsim/workload/transformer/recompute_modules.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"
#include "tp_overlap_ops.hpp"

namespace podsim::workload {
namespace {

using calibration::ComputeModel;
using calibration::GemmShape;
using network::CollectiveKind;

using Shapes = LayerShapes;

// The attention core as one fused kernel call per pass: this rank's query heads over its q_len queries
// against kv_len keys (context parallelism), causal; in 16 bits whatever the GEMM format (ComputeModel).
calibration::AttentionShape fused_attention_shape(const Shapes& x) {
  calibration::AttentionShape a;
  a.batch_heads = x.b * x.heads_per_rank;
  a.kv_batch_heads = x.b * x.kv_heads_per_rank;
  a.q_len = x.q_len;
  a.kv_len = x.kv_len;
  a.head_dim = x.head_dim;
  a.element_bytes = x.eb;
  a.causal = true;
  a.window = x.window;
  return a;
}

OpCost fused_cost(const char* name, const calibration::AttentionEstimate& e) {
  return OpCost{name, true, e.flops, e.bytes, e.seconds};
}

// The attention core: Q K^T, fused scale-mask-softmax, dropout on the probabilities, probabilities x V;
// or, with flash attention, all of it in one kernel.
void attention_core_forward(PassCost& p, const ComputeModel& cm, const Shapes& x) {
  double heads = x.b * x.heads_per_rank;
  double before = p.seconds;
  if (x.flash) {
    p.add(fused_cost(x.window > 0 ? "sliding-window flash attention forward" : "flash attention forward",
                     cm.fused_attention_forward(fused_attention_shape(x))));
    p.attention_seconds += p.seconds - before;
    return;
  }
  // Unfused, the attention GEMMs stay in bf16 under the fp8 formats (Transformer Engine quantizes only the
  // linear layers' GEMMs).
  const ComputeModel cm16 = cm.sixteen_bit();
  p.add(gemm_cost(cm16, "attention scores (QK^T)", x.q_len, x.kv_len, x.head_dim, heads));
  p.add(memory_cost(cm, "scale-mask-softmax", 2 * x.attn * x.eb));
  if (x.dropout())
    p.add(memory_cost(cm, "attention dropout", dropout_kernel_bytes(x.attn, x.eb, x.mask_bytes)));
  p.add(gemm_cost(cm16, "attention over values", x.q_len, x.head_dim, x.kv_len, heads));
  p.attention_seconds += p.seconds - before;
}

// Tensor-parallel collectives of one direction of one layer: two all-reduces of the activations, or with
// sequence parallelism an all-gather before each column-parallel GEMM and a reduce-scatter after each
// row-parallel GEMM (the same bytes per ring edge, half of them each way). `linear` holds the seconds of
// the GEMMs of the attention input (QKV), output projection, fc1 and fc2 in this pass: what each
// sequence-parallel collective overlaps with under Transformer Engine's userbuffers (parallel.tp_overlap).
struct LinearSeconds {
  double qkv = 0, proj = 0, fc1 = 0, fc2 = 0;
  // Backward, each GEMM apart (what userbuffers overlap each backward collective with).
  double qkv_dgrad = 0, qkv_wgrad = 0, fc1_dgrad = 0, fc1_wgrad = 0, proj_dgrad = 0, fc2_dgrad = 0;
  MlaSeconds mla;  // the MLA attention half's GEMMs (model.attention: mla)
};

MlaRankShapes mla_shapes(const WorkloadConfig& w, const Shapes& x) {
  return {x.b,         x.tokens, x.sp_tokens,      x.q_len, x.kv_len,
          x.t,         x.eb,     x.quantize_bytes, x.flash, w.parallel.sequence_parallel,
          x.mask_bytes};
}

// Runs `add` (which adds kernels to `p`) and adds the seconds they took to `into`.
template <class AddKernels>
void timed(PassCost& p, double& into, AddKernels&& add) {
  double before = p.seconds;
  add();
  into += p.seconds - before;
}

// The sequence-parallel collectives of a backward pass under userbuffers: each row-parallel layer's
// all-gather of its output gradient (proj_dgrad, fc2_dgrad), and each column-parallel layer's all-gather
// of its saved input for the wgrad GEMM (beside dgrad) and reduce-scatter of the input gradient (beside
// wgrad).
void ub_backward_collectives(PassCost& p, const Userbuffers& ub, double gathered, double scattered,
                             const LinearSeconds& s, bool mla) {
  using G = UbGemm;
  const auto ag = CollectiveKind::all_gather, rs = CollectiveKind::reduce_scatter;
  if (!mla) {
    p.tp.push_back(ub_collective(ag, gathered, s.qkv_dgrad, ub, G::qkv_dgrad, false));
    p.tp.push_back(ub_collective(rs, scattered, s.qkv_wgrad, ub, G::qkv_wgrad, false));
    p.tp.push_back(ub_collective(ag, gathered, s.proj_dgrad, ub, G::proj_dgrad, false));
  } else {
    p.tp.push_back({rs, scattered, s.proj});
  }
  p.tp.push_back(ub_collective(ag, gathered, s.fc1_dgrad, ub, G::fc1_dgrad, true));
  p.tp.push_back(ub_collective(rs, scattered, s.fc1_wgrad, ub, G::fc1_wgrad, true));
  p.tp.push_back(ub_collective(ag, gathered, s.fc2_dgrad, ub, G::fc2_dgrad, true));
}

// Sequence parallelism's backward as Transformer Engine runs it without userbuffers (module/linear.py,
// module/layernorm_linear.py): a row-parallel linear (proj, fc2) gathers its output gradient before its
// GEMMs; a column-parallel one (QKV, fc1) re-gathers its saved input shard asynchronously while its dgrad
// GEMM runs, then reduce-scatters that dgrad asynchronously while its wgrad GEMM runs. Four all-gathers
// and two reduce-scatters, of which two all-gathers block.
void sp_backward_collectives(PassCost& p, double gathered, double scattered, const LinearSeconds& s,
                             bool mla) {
  const auto ag = CollectiveKind::all_gather, rs = CollectiveKind::reduce_scatter;
  auto beside = [](CollectiveKind kind, double bytes, double gemm, bool mlp) {
    return TpCollective{.kind = kind,
                        .bytes = bytes,
                        .overlap_seconds = gemm,
                        .exposed_share = 0,
                        .window_share = 1,
                        .mlp = mlp,
                        .async = true};
  };
  if (!mla) {  // MLA's input collectives are its own (mla_input_collectives)
    p.tp.push_back(beside(ag, gathered, s.qkv_dgrad, false));
    p.tp.push_back(beside(rs, scattered, s.qkv_wgrad, false));
  }
  p.tp.push_back({.kind = ag, .bytes = gathered});  // proj's output gradient
  p.tp.push_back(beside(ag, gathered, s.fc1_dgrad, true));
  p.tp.push_back(beside(rs, scattered, s.fc1_wgrad, true));
  p.tp.push_back({.kind = ag, .bytes = gathered, .mlp = true});  // fc2's output gradient
}

void tp_collectives(PassCost& p, const WorkloadConfig& w, const Shapes& x, const LinearSeconds& linear,
                    bool backward) {
  if (w.parallel.tp == 1) return;
  double bytes = x.tokens * x.h * x.eb;
  // Every sequence-parallel all-gather feeds a GEMM (the QKV / fc1 inputs, the saved inputs re-gathered for
  // wgrad, the output gradients of proj / fc2): Transformer Engine quantizes before it gathers, so under
  // the fp8 family it moves the row-wise quantized operand (precision_bytes.hpp); the reduce-scatters move
  // GEMM outputs in 16 bits.
  double gathered = x.tokens * x.h * x.gather_bytes;
  bool mla = is_mla(w.model);  // MLA gathers its latents, not h (mla_ops.hpp)
  if (mla) mla_input_collectives(p, w.model, mla_shapes(w, x), linear.mla, backward);
  Userbuffers ub = userbuffers_of(w);
  const auto ag = CollectiveKind::all_gather, rs = CollectiveKind::reduce_scatter;
  if (ub && backward) return ub_backward_collectives(p, ub, gathered, bytes, linear, mla);
  if (ub) {
    if (!mla) p.tp.push_back(ub_collective(ag, gathered, linear.qkv, ub, UbGemm::qkv_fprop, false));
    if (mla) p.tp.push_back({rs, bytes, linear.proj});
    if (!mla) p.tp.push_back(ub_collective(rs, bytes, linear.proj, ub, UbGemm::proj_fprop, false));
    p.tp.push_back(ub_collective(ag, gathered, linear.fc1, ub, UbGemm::fc1_fprop, true));
    p.tp.push_back(ub_collective(rs, bytes, linear.fc2, ub, UbGemm::fc2_fprop, true));
  } else if (w.parallel.sequence_parallel && backward) {
    sp_backward_collectives(p, gathered, bytes, linear, mla);
  } else if (w.parallel.sequence_parallel) {
    if (!mla) p.tp.push_back({ag, gathered, linear.qkv});
    p.tp.push_back({rs, bytes, linear.proj});
    p.tp.push_back({.kind = ag, .bytes = gathered, .overlap_seconds = linear.fc1, .mlp = true});
    p.tp.push_back({.kind = rs, .bytes = bytes, .overlap_seconds = linear.fc2, .mlp = true});
  } else {
    if (!mla || !backward) p.tp.push_back({CollectiveKind::all_reduce, bytes});
    p.tp.push_back({.kind = CollectiveKind::all_reduce, .bytes = bytes, .mlp = true});
  }
}

// Transformer Engine quantizes each fp8 GEMM's inputs just before it (precision_bytes.hpp: cast, amax,
// the column-wise copy); nothing under bf16 or wider. The QKV and fc1 inputs come from the norm TE fuses
// with those linears (GemmInput::fused_norm_output), every other input from a kernel of its own.
void quantize(PassCost& p, const ComputeModel& cm, const char* name, const Shapes& x, double elements,
              GemmInput input = GemmInput::other) {
  double bytes = input == GemmInput::fused_norm_output ? x.fused_norm_quantize_bytes : x.quantize_bytes;
  if (bytes > 0) p.add(memory_cost(cm, name, elements * bytes));
}

const char* norm_name(const WorkloadConfig& w, bool backward) {
  if (w.model.norm == Norm::rmsnorm) return backward ? "rmsnorm backward" : "rmsnorm";
  return backward ? "layernorm backward" : "layernorm";
}

// The norm TE's LayerNormLinear runs before QKV or fc1 over this rank's residual stream: reads it and
// writes its output in fused_norm_bytes (fp8 when it quantizes for the GEMM itself).
OpCost fused_norm(const ComputeModel& cm, const char* name, const Shapes& x) {
  double E = x.sp_tokens * x.h;
  return memory_cost(cm, name, E * (x.eb + x.fused_norm_bytes));
}

const char* pre_mlp_norm_name(const WorkloadConfig& w) {
  return w.model.norm == Norm::rmsnorm ? "pre-MLP rmsnorm" : "pre-MLP layernorm";
}

// The MLP activation on this rank's fc1 output: GeLU and squared ReLU read f and write f elements; SwiGLU
// reads the gate and up halves (2f) and writes their product (f).
OpCost mlp_activation(const WorkloadConfig& w, const ComputeModel& cm, const Shapes& x) {
  double out = x.tokens * x.f / x.t;
  bool bias = w.model.linear_bias;
  switch (w.model.mlp) {
    case Mlp::swiglu: return memory_cost(cm, bias ? "bias-SwiGLU" : "SwiGLU", 3 * out * x.eb);
    case Mlp::squared_relu:
      return memory_cost(cm, bias ? "bias-squared-ReLU" : "squared ReLU", 2 * out * x.eb);
    case Mlp::gelu:
    default: return memory_cost(cm, bias ? "bias-GeLU" : "GeLU", 2 * out * x.eb);
  }
}

// Its backward: read the output gradient and the saved input(s), write the input gradient(s); with biases,
// one more pass reduces the bias gradient.
OpCost mlp_activation_backward(const WorkloadConfig& w, const ComputeModel& cm, const Shapes& x) {
  double out = x.tokens * x.f / x.t;
  bool bias = w.model.linear_bias;
  double inputs = w.model.mlp == Mlp::swiglu ? 2 : 1;
  double bytes = (1 + 2 * inputs) * out * x.eb + (bias ? inputs * out * x.eb : 0);
  switch (w.model.mlp) {
    case Mlp::swiglu: return memory_cost(cm, bias ? "bias-SwiGLU backward" : "SwiGLU backward", bytes);
    case Mlp::squared_relu:
      return memory_cost(cm, bias ? "bias-squared-ReLU backward" : "squared ReLU backward", bytes);
    case Mlp::gelu:
    default: return memory_cost(cm, bias ? "bias-GeLU backward" : "GeLU backward", bytes);
  }
}

// Rotary embeddings rotate this rank's Q and K in place (read and write), forward and backward alike.
void rotary(PassCost& p, const WorkloadConfig& w, const ComputeModel& cm, const Shapes& x, const char* name) {
  if (w.model.position_embedding != PositionEmbedding::rope) return;
  double qk = x.tokens * (x.qkv_width - (x.qkv_width - x.attention_width) / 2);  // Q and K of (Q, K, V)
  p.add(memory_cost(cm, name, 2 * qk * x.eb));
}

// The dense MLP after its norm: fc1, the activation, fc2 (each fp8 GEMM's input quantized first).
void mlp_forward(PassCost& p, const WorkloadConfig& w, const ComputeModel& cm, const Shapes& x,
                 LinearSeconds& linear) {
  Userbuffers ub = userbuffers_of(w);
  quantize(p, cm, "MLP fc1 input quantize (fp8)", x, x.tokens * x.h, GemmInput::fused_norm_output);
  timed(p, linear.fc1,
        [&] { p.add(ub_gemm(cm, "MLP fc1", ub, UbGemm::fc1_fprop, x.tokens, x.fc1_width, x.h)); });
  p.add(mlp_activation(w, cm, x));
  quantize(p, cm, "MLP fc2 input quantize (fp8)", x, x.tokens * x.f / x.t);
  timed(p, linear.fc2,
        [&] { p.add(ub_gemm(cm, "MLP fc2", ub, UbGemm::fc2_fprop, x.tokens, x.h, x.f / x.t)); });
}

// The kernel after each sublayer: bias add (with linear biases), dropout (model.dropout > 0, writing its
// mask) and the residual add, fused as Megatron-Core's bias_dropout_add; without dropout the residual add
// alone.
const char* residual_name(const WorkloadConfig& w, const Shapes& x, bool backward) {
  if (x.dropout() && w.model.linear_bias) return backward ? "bias-dropout-add backward" : "bias-dropout-add";
  if (x.dropout()) return backward ? "dropout-add backward" : "dropout-add";
  if (w.model.linear_bias) return backward ? "bias-add + residual add backward" : "bias-add + residual add";
  return backward ? "residual add backward" : "residual add";
}

// Its backward: the dropout's (read the gradient and the mask, write the gradient), then the gradient of
// the residual stream summed with the sublayer's (read two, write one).
double residual_backward_bytes(const Shapes& x, double elements) {
  return dropout_kernel_bytes(elements, x.eb, x.mask_bytes) + 3 * elements * x.eb;
}

PassCost forward_pass(const WorkloadConfig& w, const ComputeModel& cm, const Shapes& x) {
  PassCost p;
  double E = x.sp_tokens * x.h;  // elements in the residual stream held by this rank
  const char* residual = residual_name(w, x, false);
  LinearSeconds linear;
  if (is_mla(w.model)) {  // MLA's down projections take the norm's 16-bit output (a norm of its own)
    p.add(memory_cost(cm, norm_name(w, false), 2 * E * x.eb));
    mla_attention_forward(p, w.model, cm, mla_shapes(w, x), linear.mla);
  } else {
    Userbuffers ub = userbuffers_of(w);
    p.add(fused_norm(cm, norm_name(w, false), x));
    quantize(p, cm, "QKV input quantize (fp8)", x, x.tokens * x.h, GemmInput::fused_norm_output);
    timed(p, linear.qkv,
          [&] { p.add(ub_gemm(cm, "QKV projection", ub, UbGemm::qkv_fprop, x.tokens, x.qkv_width, x.h)); });
    rotary(p, w, cm, x, "rotary embedding");
    attention_core_forward(p, cm, x);
    quantize(p, cm, "output projection input quantize (fp8)", x, x.tokens * x.attention_width);
    timed(p, linear.proj, [&] {
      p.add(ub_gemm(cm, "attention output projection", ub, UbGemm::proj_fprop, x.tokens, x.h,
                    x.attention_width));
    });
  }
  p.add(memory_cost(cm, residual, E * (3 * x.eb + x.mask_bytes)));
  p.add(fused_norm(cm, pre_mlp_norm_name(w), x));  // a MoE layer replaces it (moe_costs.cpp)
  mlp_forward(p, w, cm, x, linear);
  p.add(memory_cost(cm, residual, E * (3 * x.eb + x.mask_bytes)));
  tp_collectives(p, w, x, linear, false);
  return p;
}

// The two backward GEMMs of Y[m, n] = X[m, k] W[k, n] (linear_backward), each as userbuffers run it: dgrad
// as GEMM `dg`, wgrad as `wg` (kUbGemms: plain, as the row-parallel layers' wgrads move no TP data);
// their seconds into `dgrad_s` and `wgrad_s`.
void backward_gemms(PassCost& p, const ComputeModel& cm, const Userbuffers& ub, const char* dgrad,
                    const char* wgrad, UbGemm dg, int wg, double m, double n, double k, double& dgrad_s,
                    double& wgrad_s) {
  if (!ub) {
    timed(p, dgrad_s, [&] { p.add(gemm_cost(cm, dgrad, m, k, n)); });
    timed(p, wgrad_s, [&] { p.add(gemm_cost(cm, wgrad, k, n, m)); });
    return;
  }
  timed(p, dgrad_s, [&] { p.add(ub_gemm(cm, dgrad, ub, dg, m, k, n)); });
  timed(p, wgrad_s, [&] {
    p.add(wg < kUbGemms ? ub_gemm(cm, wgrad, ub, static_cast<UbGemm>(wg), k, n, m)
                        : gemm_cost(cm, wgrad, k, n, m));
  });
}

// The attention half of the backward of an MHA / GQA layer: output projection, attention core, rotary,
// QKV projection.
void mha_attention_backward(PassCost& p, const WorkloadConfig& w, const ComputeModel& cm, const Shapes& x,
                            LinearSeconds& linear) {
  double heads = x.b * x.heads_per_rank;
  Userbuffers ub = userbuffers_of(w);
  double unused = 0;
  quantize(p, cm, "output projection grad quantize (fp8)", x, x.tokens * x.h);
  timed(p, linear.proj, [&] {
    backward_gemms(p, cm, ub, "output projection dgrad", "output projection wgrad", UbGemm::proj_dgrad,
                   kUbGemms, x.tokens, x.h, x.attention_width, linear.proj_dgrad, unused);
  });
  double attention_start = p.seconds;
  if (x.flash) {  // one kernel; it recomputes the scores from Q, K and the saved logsumexp
    p.add(fused_cost(x.window > 0 ? "sliding-window flash attention backward" : "flash attention backward",
                     cm.fused_attention_backward(fused_attention_shape(x))));
  } else {
    const ComputeModel cm16 = cm.sixteen_bit();  // bf16 attention GEMMs under fp8 (as in the forward)
    // (softmax) V: dP = dO V^T [q x kv, k = d], dV = P^T dO [kv x d, k = q].
    p.add(gemm_cost(cm16, "attention over values dgrad", x.q_len, x.kv_len, x.head_dim, heads));
    p.add(gemm_cost(cm16, "attention over values wgrad", x.kv_len, x.head_dim, x.q_len, heads));
    if (x.dropout())
      p.add(memory_cost(cm, "attention dropout backward", dropout_kernel_bytes(x.attn, x.eb, x.mask_bytes)));
    p.add(memory_cost(cm, "softmax backward", 3 * x.attn * x.eb));
    // Q K^T: dQ = dS K [q x d, k = kv], dK = dS^T Q [kv x d, k = q].
    p.add(gemm_cost(cm16, "attention scores dgrad Q", x.q_len, x.head_dim, x.kv_len, heads));
    p.add(gemm_cost(cm16, "attention scores dgrad K", x.kv_len, x.head_dim, x.q_len, heads));
  }
  p.attention_seconds += p.seconds - attention_start;
  rotary(p, w, cm, x, "rotary embedding backward");
  quantize(p, cm, "QKV grad quantize (fp8)", x, x.tokens * x.qkv_width);
  timed(p, linear.qkv, [&] {
    backward_gemms(p, cm, ub, "QKV dgrad", "QKV wgrad", UbGemm::qkv_dgrad,
                   static_cast<int>(UbGemm::qkv_wgrad), x.tokens, x.qkv_width, x.h, linear.qkv_dgrad,
                   linear.qkv_wgrad);
  });
  if (w.model.linear_bias) p.add(memory_cost(cm, "QKV bias grad", x.tokens * x.qkv_width * x.eb));
}

PassCost backward_pass(const WorkloadConfig& w, const ComputeModel& cm, const Shapes& x) {
  PassCost p;
  double E = x.sp_tokens * x.h;
  const char* residual = residual_name(w, x, true);
  // The backward collective of a linear layer overlaps its dgrad and wgrad GEMMs (TE pipelines the
  // all-gather of dY with dgrad and runs the reduce-scatter of dX during wgrad).
  LinearSeconds linear;
  // In reverse order of the forward pass; each fp8 GEMM's output gradient is quantized first.
  p.add(memory_cost(cm, residual, residual_backward_bytes(x, E)));
  Userbuffers ub = userbuffers_of(w);
  double unused = 0;
  quantize(p, cm, "MLP fc2 grad quantize (fp8)", x, x.tokens * x.h);
  timed(p, linear.fc2, [&] {
    backward_gemms(p, cm, ub, "MLP fc2 dgrad", "MLP fc2 wgrad", UbGemm::fc2_dgrad, kUbGemms, x.tokens, x.h,
                   x.f / x.t, linear.fc2_dgrad, unused);
  });
  p.add(mlp_activation_backward(w, cm, x));
  quantize(p, cm, "MLP fc1 grad quantize (fp8)", x, x.tokens * x.fc1_width);
  timed(p, linear.fc1, [&] {
    backward_gemms(p, cm, ub, "MLP fc1 dgrad", "MLP fc1 wgrad", UbGemm::fc1_dgrad,
                   static_cast<int>(UbGemm::fc1_wgrad), x.tokens, x.fc1_width, x.h, linear.fc1_dgrad,
                   linear.fc1_wgrad);
  });
  p.add(memory_cost(cm, norm_name(w, true), 3 * E * x.eb));
  p.add(memory_cost(cm, residual, residual_backward_bytes(x, E)));
  if (is_mla(w.model)) {
    mla_attention_backward(p, w.model, cm, mla_shapes(w, x), linear.mla);
  } else {
    mha_attention_backward(p, w, cm, x, linear);
  }
  p.add(memory_cost(cm, norm_name(w, true), 3 * E * x.eb));
  if (x.accumulate_bytes_per_param > 0)
    p.add(memory_cost(cm, "weight-gradient accumulation",
                      layer_params(w.model) / x.t * x.accumulate_bytes_per_param));
  tp_collectives(p, w, x, linear, true);
  return p;
}

}  // namespace

OpCost gemm_cost(const ComputeModel& cm, const char* name, double m, double n, double k, double batch) {
  auto e = cm.gemm(GemmShape{m, n, k, batch});
  return OpCost{name, true, e.flops, 0, e.seconds};
}

OpCost memory_cost(const ComputeModel& cm, const char* name, double bytes) {
  return OpCost{name, false, 0, bytes, cm.memory_op(bytes)};
}

void linear_backward(PassCost& pass, const ComputeModel& cm, const char* dgrad, const char* wgrad, double m,
                     double n, double k, double batch) {
  pass.add(gemm_cost(cm, dgrad, m, k, n, batch));
  pass.add(gemm_cost(cm, wgrad, k, n, m, batch));
}

double element_bytes(topology::Precision p) {
  return topology::bytes_per_element(p);
}

calibration::DeviceRates device_rates(const topology::DeviceSpec& device, topology::Precision precision) {
  calibration::DeviceRates rates;
  rates.peak_flops = device.peak(precision);
  rates.hbm_bandwidth = device.hbm_bandwidth;
  rates.sm_count = device.sm_count;
  rates.element_bytes = element_bytes(precision);
  rates.format = topology::to_string(precision);
  if (topology::bytes_per_element(precision) < 2)
    rates.attention_peak_flops = device.peak(topology::Precision::bf16);
  return rates;
}

void PassCost::add(OpCost op) {
  seconds += op.seconds;
  flops += op.flops;
  ops.push_back(op);
}

void PassCost::add(const PassCost& other) {
  for (const auto& op : other.ops) add(op);
  tp.insert(tp.end(), other.tp.begin(), other.tp.end());
  attention_seconds += other.attention_seconds;
}

void append_kernels(std::vector<KernelCost>& kernels, const char* group, const PassCost& pass) {
  for (const auto& op : pass.ops) kernels.push_back({group, op.name, op.seconds, op.flops, op.bytes});
}

LayerCosts layer_costs(const WorkloadConfig& w, int micro_batch, const ComputeModel& cm, bool windowed) {
  Shapes x = layer_shapes(w, micro_batch);
  // Unfused attention computes every score whatever the mask: only the fused kernel skips the blocks
  // outside the window.
  if (windowed) x.window = static_cast<double>(w.model.sliding_window);
  LayerCosts c;
  // The backward's fp8 GEMMs (dgrad, wgrad) accumulate as the recipe says (gemm_accumulation.hpp); the
  // kernels that are not Transformer Engine fp8 GEMMs cost the same under either model.
  c.forward = forward_pass(w, gemm_model(w, cm, GemmPass::fprop), x);
  c.backward = backward_pass(w, gemm_model(w, cm, GemmPass::dgrad), x);
  if (w.training.recompute == Recompute::full) {
    c.recompute = c.forward;
  } else if (w.training.recompute == Recompute::selective) {
    c.recompute = selective_recompute(w, micro_batch, cm, true, windowed);
  }
  return c;
}

WindowSaving sliding_window_saving(const WorkloadConfig& w, int micro_batch, const ComputeModel& cm,
                                   const LayerCosts& full) {
  WindowSaving s;
  if (w.model.sliding_window <= 0 || w.model.sliding_window >= w.model.seq_len ||
      w.training.attention != Attention::flash)
    return s;
  LayerCosts windowed = layer_costs(w, micro_batch, cm, true);
  s.forward = full.forward.seconds - windowed.forward.seconds;
  s.backward =
      full.recompute.seconds + full.backward.seconds - windowed.recompute.seconds - windowed.backward.seconds;
  s.windowed_forward = windowed.forward;
  s.windowed_backward = windowed.backward;
  return s;
}

PassCost selective_recompute(const WorkloadConfig& w, int micro_batch, const ComputeModel& model,
                             bool dense_mlp, bool windowed) {
  Shapes x = layer_shapes(w, micro_batch);
  if (windowed) x.window = static_cast<double>(w.model.sliding_window);
  const ComputeModel cm = gemm_model(w, model, GemmPass::fprop);  // forward kernels run again
  PassCost p;
  if (recomputes_mla_up_proj(w)) {  // rank-local: the checkpoint keeps the gathered latents
    MlaSeconds unused;
    mla_up_projection_forward(p, w.model, cm, mla_shapes(w, x), unused);
  }
  if (recomputes_core_attention(w)) {  // no collectives: the attention core is rank-local
    if (is_mla(w.model))
      mla_attention_core_forward(p, w.model, cm, mla_shapes(w, x));
    else
      attention_core_forward(p, cm, x);
  }
  if (dense_mlp && recomputes_dense_mlp(w)) {
    // Normal checkpointing reruns the whole MLP module: TE's fused pre-MLP norm, and with tp its
    // sequence-parallel all-gather / reduce-scatter (or the all-reduce after fc2), as in the forward.
    LinearSeconds linear;
    p.add(fused_norm(cm, pre_mlp_norm_name(w), x));
    mlp_forward(p, w, cm, x, linear);
    if (w.parallel.tp > 1) {
      double bytes = x.tokens * x.h * x.eb, gathered = x.tokens * x.h * x.gather_bytes;
      Userbuffers ub = userbuffers_of(w);
      if (w.parallel.sequence_parallel) {
        p.tp.push_back(
            ub_collective(CollectiveKind::all_gather, gathered, linear.fc1, ub, UbGemm::fc1_fprop, true));
        p.tp.push_back(
            ub_collective(CollectiveKind::reduce_scatter, bytes, linear.fc2, ub, UbGemm::fc2_fprop, true));
      } else {
        p.tp.push_back({.kind = CollectiveKind::all_reduce, .bytes = bytes, .mlp = true});
      }
    }
  }
  return p;
}

}  // namespace podsim::workload
