#include "podsim/workload/transformer/moe_costs.hpp"

#include <algorithm>
#include <string_view>

#include "layer_shapes.hpp"
#include "podsim/workload/transformer/gemm_accumulation.hpp"
#include "podsim/workload/transformer/moe_math.hpp"
#include "podsim/workload/transformer/precision_bytes.hpp"
#include "podsim/workload/transformer/recompute_modules.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"

namespace podsim::workload {
namespace {

using calibration::ComputeModel;

// Ops of the dense layer that belong to its MLP (replaced by the MoE block): layer_ops.cpp names them
// "MLP fc1 ...", "MLP fc2 ..." and by their activation.
bool is_mlp_op(std::string_view name) {
  for (std::string_view mark : {"MLP", "GeLU", "SwiGLU", "squared"})
    if (name.find(mark) != std::string_view::npos) return true;
  return false;
}
constexpr std::string_view kAccumulation = "weight-gradient accumulation";

// The dense pass without its MLP; its TP collectives: the attention half's, and the MLP's when
// `keep_mlp_tp` (the shared experts take its place). Returns the gradient accumulation bytes per parameter
// it had.
PassCost attention_half(const PassCost& dense, bool keep_mlp_tp, double& accumulate_per_param,
                        double layer_params_per_rank) {
  PassCost p;
  for (const auto& op : dense.ops) {
    if (op.name == kAccumulation) {
      accumulate_per_param = op.bytes / layer_params_per_rank;
      continue;
    }
    if (!is_mlp_op(op.name)) p.add(op);
  }
  for (const auto& c : dense.tp)
    if (keep_mlp_tp || !c.mlp) p.tp.push_back(c);
  p.attention_seconds = dense.attention_seconds;
  return p;
}

struct Dims {
  double h, eb, fc1, fc2_k, local_experts, quantize, routed, experts;
};

Dims dims(const WorkloadConfig& w) {
  Dims d{};
  d.h = static_cast<double>(w.model.hidden);
  d.eb = activation_bytes(w.training);
  double swiglu = w.model.mlp == Mlp::swiglu ? 2 : 1;
  d.fc1 = swiglu * w.moe.ffn_hidden / w.parallel.etp;  // this rank's columns of each expert's fc1
  d.fc2_k = static_cast<double>(w.moe.ffn_hidden) / w.parallel.etp;
  d.local_experts = static_cast<double>(w.moe.experts) / w.parallel.ep;
  d.quantize = quantize_bytes_per_element(w.training);
  d.experts = static_cast<double>(w.moe.experts);
  return d;
}

// The local experts as grouped GEMMs (Transformer Engine / cuBLAS grouped GEMM: one kernel over the
// experts, the tile/wave model over all their tiles): the mean experts in one batch, the busiest one's
// excess over the mean as one more GEMM.
void grouped(PassCost& p, const ComputeModel& cm, const char* name, const MoeTraffic& t, double n, double k,
             double experts, bool backward) {
  double m = t.mean_expert_tokens, extra = t.busiest_expert_tokens - t.mean_expert_tokens;
  if (backward) {
    linear_backward(p, cm, name, name, m, n, k, experts);
    if (extra > 0) linear_backward(p, cm, name, name, extra, n, k, 1);
    return;
  }
  p.add(gemm_cost(cm, name, m, n, k, experts));
  if (extra > 0) p.add(gemm_cost(cm, name, extra, n, k, 1));
}

// Transformer Engine's GroupedLinear quantizes its input (and, backward, its output gradient) one expert's
// split at a time: split_quantize -> multi_tensor_quantize_impl (transformer_engine/pytorch/csrc/
// extensions/cast.cpp, github NVIDIA/TransformerEngine @ d0067d0d) has one fused kernel for all splits
// only under delayed scaling (nvte_multi_cast_transpose) and NVFP4; otherwise every split's quantizer runs
// its own kernels: current scaling three (amax, scale, cast + transpose), the block-scaled formats one.
// The bytes are the same as one kernel's; each extra kernel costs the profile's kernel overhead.
OpCost split_quantize(const ComputeModel& cm, const TrainingConfig& t, const char* name, double bytes,
                      double splits) {
  using topology::Precision;
  OpCost op = memory_cost(cm, name, bytes);
  bool fused = (t.precision == Precision::fp8 && t.fp8_recipe == Fp8Recipe::delayed) ||
               t.precision == Precision::nvfp4;
  double per_split = t.precision == Precision::fp8 && t.fp8_recipe == Fp8Recipe::current ? 3 : 1;
  double kernels = fused ? 1 : per_split * std::max(1.0, splits);
  op.seconds += (kernels - 1) * cm.kernel_overhead();
  return op;
}

}  // namespace

void moe_selective_recompute(PassCost& p, const WorkloadConfig& w, const ComputeModel& cm,
                             const MoeTraffic& t) {
  Dims d = dims(w);
  if (recomputes_moe_norm(w))  // the pre-MLP norm again: read its input, write its output
    p.add(memory_cost(cm, "MoE pre-MLP norm (recompute)", 2 * t.routed_tokens * d.h * d.eb));
  if (recomputes_moe_act(w)) {  // the experts' activation again from fc1's stored output (+ fp8 cast)
    double local = d.local_experts;
    double act = (t.mean_expert_tokens * (local - 1) + t.busiest_expert_tokens) * d.fc2_k;
    p.add(memory_cost(cm, "MoE expert activation (recompute)",
                      (w.model.mlp == Mlp::swiglu ? 3 : 2) * act * d.eb));
    if (d.quantize > 0)
      p.add(
          split_quantize(cm, w.training, "MoE fc2 input quantize (fp8, recompute)", act * d.quantize, local));
  }
}

MoeTraffic moe_traffic(const WorkloadConfig& w, int micro_batch) {
  MoeTraffic t;
  const auto& p = w.parallel;
  Dims d = dims(w);
  double tokens = static_cast<double>(w.model.seq_len) / p.cp * micro_batch;
  t.routed_tokens = p.sequence_parallel ? tokens / p.tp : tokens;
  double copies = t.routed_tokens * w.moe.top_k;  // token copies this rank sends
  double load = busiest_expert_load(w.moe);
  // Balanced: each EP rank receives `copies` token copies from the group (ep x copies/ep), x etp after the
  // expert-TP all-gather, spread over its local experts.
  double received = copies * p.etp;
  t.mean_expert_tokens = received / d.local_experts;
  t.busiest_expert_tokens = load * t.mean_expert_tokens;
  // The busiest rank receives its mean experts' tokens plus the busiest expert's excess: the all-to-all
  // ends when it has, so every rank's share is scaled to it (a uniform all-to-all of that size).
  double rank_load = (d.local_experts - 1 + load) / d.local_experts;
  if (w.moe.dispatcher == MoeDispatcher::allgather)  // the gathered buffer of all EP ranks' routed tokens
    t.dispatch_bytes = t.routed_tokens * d.h * d.eb * p.ep;  // (each token once, not x top_k)
  else if (w.moe.dispatcher == MoeDispatcher::flex) {
    // DeepEP / HybridEP (network/expert_dispatch.hpp): a token once to each other node that holds one of
    // its experts, then once into each rank of a node that holds one (deduplicated per rank, not per
    // expert); both scaled to the busiest receiver like the all-to-all.
    double nodes = ep_group_nodes(w), per_node = p.ep / nodes, token = d.h * d.eb * rank_load;
    t.flex_to_each_remote_peer =
        nodes > 1 ? t.routed_tokens * routed_to_any_of(w, d.experts / nodes) * token : 0;
    // A rank's NVLink stage writes its own tokens and those that arrived for its index from every other
    // node: `nodes` x its tokens' share, per local peer.
    t.flex_to_each_local_peer = t.routed_tokens * nodes * routed_to_any_of(w, d.local_experts) * token;
    t.dispatch_bytes = (nodes - 1) * t.flex_to_each_remote_peer + (per_node - 1) * t.flex_to_each_local_peer;
  } else  // all-to-all: every token copy
    t.dispatch_bytes = copies * d.h * d.eb * rank_load;
  if (p.etp > 1) t.etp_bytes = received * d.h * d.eb * rank_load;
  return t;
}

MoeLayerCosts moe_layer_costs(const WorkloadConfig& w, int micro_batch, const ComputeModel& model,
                              const LayerCosts& dense) {
  MoeLayerCosts c;
  // The experts' GEMMs are Transformer Engine's (GroupedLinear): forward and backward accumulate as the
  // recipe says (gemm_accumulation.hpp); the memory-bound kernels cost the same under either model.
  const ComputeModel cm = gemm_model(w, model, GemmPass::fprop);
  const ComputeModel cmb = gemm_model(w, model, GemmPass::dgrad);
  c.traffic = moe_traffic(w, micro_batch);
  const MoeTraffic& t = c.traffic;
  Dims d = dims(w);
  const ComputeModel cm16 = cm.sixteen_bit();  // the router runs in 16 bits (fp32 softmax)
  double n = t.routed_tokens, copies = n * w.moe.top_k;
  double received = t.mean_expert_tokens * (d.local_experts - 1) + t.busiest_expert_tokens;
  bool keep_tp = w.moe.shared_experts > 0;
  double tp = w.parallel.tp, accumulate = 0;
  double dense_params = layer_params(w.model) / tp;
  PassCost fwd = attention_half(dense.forward, keep_tp, accumulate, dense_params);
  PassCost bwd = attention_half(dense.backward, keep_tp, accumulate, dense_params);
  // The pre-MLP norm is Megatron-Core's TENorm before the router here, not fused with a linear: it writes
  // its 16-bit output whatever the GEMM format (the dense layer's fused norm went with its MLP above).
  const LayerShapes x = layer_shapes(w, micro_batch);
  double residual = x.sp_tokens * x.h;
  fwd.add(memory_cost(cm, w.model.norm == Norm::rmsnorm ? "MoE pre-MLP rmsnorm" : "MoE pre-MLP layernorm",
                      2 * residual * d.eb));
  const double attention_forward = fwd.seconds, attention_backward = bwd.seconds;

  // Forward: router, top-k, permute; (dispatch); experts; (combine); unpermute.
  fwd.add(gemm_cost(cm16, "MoE router", n, d.experts, d.h));
  fwd.add(memory_cost(cm, "MoE router softmax + top-k (fp32)", 3 * n * d.experts * 4));
  fwd.add(memory_cost(cm, "MoE permute", (n + copies) * d.h * d.eb));
  if (d.quantize > 0)
    fwd.add(split_quantize(cm, w.training, "MoE expert input quantize (fp8)", received * d.h * d.quantize,
                           d.local_experts));
  grouped(fwd, cm, "MoE grouped fc1", t, d.fc1, d.h, d.local_experts, false);
  double act = received * d.fc2_k;
  bool swiglu = w.model.mlp == Mlp::swiglu;
  fwd.add(memory_cost(cm, "MoE expert activation", (swiglu ? 3 : 2) * act * d.eb));
  if (d.quantize > 0)
    fwd.add(
        split_quantize(cm, w.training, "MoE fc2 input quantize (fp8)", act * d.quantize, d.local_experts));
  grouped(fwd, cm, "MoE grouped fc2", t, d.h, d.fc2_k, d.local_experts, false);
  fwd.add(memory_cost(cm, "MoE unpermute (weighted sum)", (copies + n) * d.h * d.eb));

  bwd.add(memory_cost(cm, "MoE unpermute backward", (copies + n) * d.h * d.eb));
  if (d.quantize > 0)
    bwd.add(split_quantize(cm, w.training, "MoE fc2 grad quantize (fp8)", received * d.h * d.quantize,
                           d.local_experts));
  grouped(bwd, cmb, "MoE grouped fc2 dgrad/wgrad", t, d.h, d.fc2_k, d.local_experts, true);
  bwd.add(memory_cost(cm, "MoE expert activation backward", (swiglu ? 5 : 3) * act * d.eb));
  if (d.quantize > 0)
    bwd.add(split_quantize(cm, w.training, "MoE fc1 grad quantize (fp8)", act * d.quantize, d.local_experts));
  grouped(bwd, cmb, "MoE grouped fc1 dgrad/wgrad", t, d.fc1, d.h, d.local_experts, true);
  bwd.add(memory_cost(cm, "MoE permute backward", (n + copies) * d.h * d.eb));
  bwd.add(memory_cost(cm, "MoE router softmax backward (fp32)", 3 * n * d.experts * 4));
  linear_backward(bwd, cm16, "MoE router dgrad", "MoE router wgrad", n, d.experts, d.h);

  // Shared experts: a dense MLP over the TP group (its AG / RS are the kept collectives).
  if (w.moe.shared_experts > 0) {
    double tokens = static_cast<double>(w.model.seq_len) / w.parallel.cp * micro_batch;
    double f = static_cast<double>(w.moe.shared_experts * w.moe.shared_ffn_hidden) / tp;
    double fc1 = (swiglu ? 2 : 1) * f;
    double before = fwd.seconds;
    fwd.add(gemm_cost(cm, "MoE shared expert fc1", tokens, fc1, d.h));
    fwd.add(memory_cost(cm, "MoE shared expert activation", (swiglu ? 3 : 2) * tokens * f * d.eb));
    fwd.add(gemm_cost(cm, "MoE shared expert fc2", tokens, d.h, f));
    c.shared_forward_seconds = fwd.seconds - before;
    before = bwd.seconds;
    linear_backward(bwd, cmb, "MoE shared expert fc2 dgrad", "MoE shared expert fc2 wgrad", tokens, d.h, f);
    bwd.add(memory_cost(cm, "MoE shared expert activation backward", (swiglu ? 5 : 3) * tokens * f * d.eb));
    linear_backward(bwd, cmb, "MoE shared expert fc1 dgrad", "MoE shared expert fc1 wgrad", tokens, fc1, d.h);
    c.shared_backward_seconds = bwd.seconds - before;
    // The kept MLP collectives hide behind the shared experts' GEMMs, not the dense MLP's they were costed
    // with: same tokens and hidden, so the GEMM time scales with the width.
    double width = static_cast<double>(w.moe.shared_experts * w.moe.shared_ffn_hidden) / w.model.ffn_hidden;
    for (PassCost* p : {&fwd, &bwd})
      for (auto& col : p->tp)
        if (col.mlp) col.overlap_seconds *= width;
  }
  if (accumulate > 0) {
    double mlp = mlp_params(w.model, static_cast<double>(w.model.ffn_hidden));
    double params = (layer_params(w.model) - mlp + shared_expert_params(w)) / tp + router_params(w) +
                    d.local_experts * routed_expert_params(w) / w.parallel.etp;
    bwd.add(memory_cost(cm, "weight-gradient accumulation", params * accumulate));
  }
  c.block_forward_seconds = fwd.seconds - attention_forward;
  c.block_backward_seconds = bwd.seconds - attention_backward;
  c.layer.forward = fwd;
  c.layer.backward = bwd;
  if (w.training.recompute == Recompute::full)
    c.layer.recompute = fwd;
  else
    c.layer.recompute = selective_recompute(w, micro_batch, model, false);  // recompute_modules, MLP aside
  moe_selective_recompute(c.layer.recompute, w, cm, t);
  return c;
}

}  // namespace podsim::workload
