#include "podsim/workload/moe/gshard_math.hpp"

#include <algorithm>

namespace podsim::workload {
namespace {

using calibration::ComputeModel;

struct Dims {
  double M, H, a, s, T, V, E, eb, S, C, g, el, expert_tokens;
  double sequences;  // per device
};

Dims dims(const GShardConfig& w) {
  Dims d{};
  d.M = static_cast<double>(w.hidden);
  d.H = static_cast<double>(w.ffn_hidden);
  d.a = static_cast<double>(w.heads);
  d.s = static_cast<double>(w.seq_len);
  d.T = static_cast<double>(w.tokens_per_device());
  d.V = static_cast<double>(w.vocab);
  d.E = static_cast<double>(w.experts);
  d.eb = w.activation_bytes;
  d.S = static_cast<double>(w.group_tokens());
  d.C = w.expert_capacity();
  d.g = static_cast<double>(w.groups_per_device());
  d.el = static_cast<double>(w.experts_per_device());
  // Tokens one local expert processes: C from each of the devices' groups, split over its replicas.
  d.expert_tokens = static_cast<double>(w.devices) * d.g * d.C / static_cast<double>(w.devices_per_expert());
  d.sequences = d.T / d.s;
  return d;
}

// GShard's top-2 gating as Lingvo writes it (tensorflow/lingvo lingvo/core/gshard_layers.py,
// Top2GatingOnLogits; the einsum implementation of Lepikhin et al. 2020, Algorithm 1), counted in passes over
// a group's [S, E] gate tensors (fp32) and [S, E, C] combine / dispatch tensors, each pass one read or write
// of the whole tensor. XLA fuses element-wise chains into their consumer; what is counted are the tensors a
// reduction, argmax, cumsum or einsum reads and those several consumers share (written once):
//  - softmax over E: max, sum of exponentials, normalize (3 reads, 1 write);
//  - top-2 choice: argmax of the gates (1), gate_1 = einsum(gates, mask_1) (1), the density proxy
//    reduce_mean(gates) for the auxiliary loss (1), argmax of the gates without the first (1), gate_2 (1);
//  - per choice k = 1, 2: the exclusive cumsum of mask_k written (1), the over-capacity summary (1), the
//    capacity-masked mask written (1) and read by position_in_expert (einsum), mask_k_count, mask_k_flat
//    (3), the position einsum's own read of the cumsum (1): 7 each;
//  - [S, E, C]: each choice's outer product einsum(GSE, GSC -> GSEC) written (2), their sum (2 reads, 1
//    write), dispatch = cast(combine) (1 read, 1 write).
// Backward: the combine weights' gradient [S, E, C] written by the combine einsum's dgrad and reduced (2);
// per choice the gate gradient's [S, E] einsum with its mask (2 x 2), their sum into the softmax backward
// (2 reads, 1 write) and the auxiliary loss's density-proxy gradient (1).
// The pass counts are podsim's reading of that code, not a measurement of XLA's fusion.
constexpr double kGateBytes = 4;
constexpr double kSoftmaxPasses = 4, kTopTwoPasses = 5, kPositionPasses = 7, kCombinePasses = 7;
constexpr double kCombineBackwardPasses = 2, kGateBackwardPasses = 8;

// Self-attention (queries, keys and values from the same tokens) or cross-attention (keys and values
// from the encoder output), with the pre-layer-norm and the residual add.
void attention_forward(PassCost& p, const ComputeModel& cm, const Dims& x, bool cross) {
  double heads = x.sequences * x.a, hd = x.M / x.a;
  p.add(memory_cost(cm, "layernorm", 2 * x.T * x.M * x.eb));
  if (cross) {
    p.add(gemm_cost(cm, "cross-attention Q projection", x.T, x.M, x.M));
    p.add(gemm_cost(cm, "cross-attention KV projection", x.T, 2 * x.M, x.M));
  } else {
    p.add(gemm_cost(cm, "QKV projection", x.T, 3 * x.M, x.M));
  }
  p.add(gemm_cost(cm, "attention scores (QK^T)", x.s, x.s, hd, heads));
  p.add(memory_cost(cm, "softmax", 2 * heads * x.s * x.s * x.eb));
  p.add(gemm_cost(cm, "attention over values", x.s, hd, x.s, heads));
  p.add(gemm_cost(cm, "attention output projection", x.T, x.M, x.M));
  p.add(memory_cost(cm, "residual add", 3 * x.T * x.M * x.eb));
}

void attention_backward(PassCost& p, const ComputeModel& cm, const Dims& x, bool cross) {
  double heads = x.sequences * x.a, hd = x.M / x.a;
  p.add(memory_cost(cm, "residual add backward", 2 * x.T * x.M * x.eb));
  linear_backward(p, cm, "attention output dgrad", "attention output wgrad", x.T, x.M, x.M);
  p.add(gemm_cost(cm, "attention over values dgrad", x.s, x.s, hd, heads));
  p.add(gemm_cost(cm, "attention over values wgrad", x.s, hd, x.s, heads));
  p.add(memory_cost(cm, "softmax backward", 3 * heads * x.s * x.s * x.eb));
  p.add(gemm_cost(cm, "attention scores dgrad Q", x.s, hd, x.s, heads));
  p.add(gemm_cost(cm, "attention scores dgrad K", x.s, hd, x.s, heads));
  if (cross) {
    linear_backward(p, cm, "cross-attention Q dgrad", "cross-attention Q wgrad", x.T, x.M, x.M);
    linear_backward(p, cm, "cross-attention KV dgrad", "cross-attention KV wgrad", x.T, 2 * x.M, x.M);
  } else {
    linear_backward(p, cm, "QKV dgrad", "QKV wgrad", x.T, 3 * x.M, x.M);
  }
  p.add(memory_cost(cm, "layernorm backward", 3 * x.T * x.M * x.eb));
}

}  // namespace

GShardParams gshard_params(const GShardConfig& w) {
  double M = static_cast<double>(w.hidden), H = static_cast<double>(w.ffn_hidden);
  double E = static_cast<double>(w.experts), Lh = static_cast<double>(w.layers_per_stack());
  double moe = static_cast<double>(w.moe_layers()), L = static_cast<double>(w.layers);
  GShardParams p;
  double attention = 4 * M * M + 2 * M;          // Q, K, V, output projections + layer norm
  p.dense = Lh * attention + Lh * 2 * attention  // encoder self; decoder self + cross
            + (L - moe) * (2 * M * H + 2 * M)    // dense feed-forward sublayers
            + moe * (M * E + 2 * M)              // gates
            + static_cast<double>(w.vocab) * M   // shared embedding / softmax weights
            + 4 * M;                             // final layer norms
  p.per_expert = 2 * M * H;
  p.expert = moe * E * p.per_expert;
  return p;
}

double gshard_device_params(const GShardConfig& w) {
  GShardParams p = gshard_params(w);
  return p.dense + static_cast<double>(w.moe_layers()) * w.experts_per_device() * p.per_expert;
}

double gshard_all_to_all_bytes(const GShardConfig& w) {
  Dims x = dims(w);
  return x.g * x.E * x.C * x.M * x.eb;
}

GShardLayerCosts gshard_layer_costs(const GShardConfig& w, const ComputeModel& cm) {
  Dims x = dims(w);
  GShardLayerCosts c;
  attention_forward(c.attention_forward, cm, x, false);
  attention_backward(c.attention_backward, cm, x, false);
  attention_forward(c.decoder_attention_forward, cm, x, false);
  attention_forward(c.decoder_attention_forward, cm, x, true);
  attention_backward(c.decoder_attention_backward, cm, x, true);
  attention_backward(c.decoder_attention_backward, cm, x, false);

  c.dense_ffn_forward.add(memory_cost(cm, "layernorm", 2 * x.T * x.M * x.eb));
  c.dense_ffn_forward.add(gemm_cost(cm, "FFN fc1", x.T, x.H, x.M));
  c.dense_ffn_forward.add(memory_cost(cm, "ReLU", 2 * x.T * x.H * x.eb));
  c.dense_ffn_forward.add(gemm_cost(cm, "FFN fc2", x.T, x.M, x.H));
  c.dense_ffn_forward.add(memory_cost(cm, "residual add", 3 * x.T * x.M * x.eb));
  c.dense_ffn_backward.add(memory_cost(cm, "residual add backward", 2 * x.T * x.M * x.eb));
  linear_backward(c.dense_ffn_backward, cm, "FFN fc2 dgrad", "FFN fc2 wgrad", x.T, x.M, x.H);
  c.dense_ffn_backward.add(memory_cost(cm, "ReLU backward", 3 * x.T * x.H * x.eb));
  linear_backward(c.dense_ffn_backward, cm, "FFN fc1 dgrad", "FFN fc1 wgrad", x.T, x.H, x.M);
  c.dense_ffn_backward.add(memory_cost(cm, "layernorm backward", 3 * x.T * x.M * x.eb));

  // MoE: GShard's top-2 gating with local group dispatching (Lepikhin et al. 2020, Algorithm 1 and the
  // einsum implementation of Sec. 3): gate logits, softmax in fp32, top-k and the cumulative-sum
  // positions, the dispatch mask and combine weights [S, E, C] per group, then one-hot einsums.
  double ec = x.E * x.C;  // rows of a group's dispatched tensor
  double mask = x.g * x.S * ec;
  auto& gd = c.gate_dispatch_forward;
  gd.add(memory_cost(cm, "layernorm", 2 * x.T * x.M * x.eb));
  gd.add(gemm_cost(cm, "gate logits", x.S, x.E, x.M, x.g));
  gd.add(memory_cost(cm, "gate softmax (fp32)", kSoftmaxPasses * x.T * x.E * kGateBytes));
  gd.add(memory_cost(cm, "top-2 choice, positions (cumsum), capacity masks (fp32 [S,E])",
                     (kTopTwoPasses + 2 * kPositionPasses) * x.T * x.E * kGateBytes));
  gd.add(memory_cost(cm, "combine and dispatch tensors [S,E,C]", kCombinePasses * mask * x.eb));
  gd.add(gemm_cost(cm, "dispatch einsum (GSEC,GSM->EGCM)", ec, x.M, x.S, x.g));
  auto& ex = c.experts_forward;
  ex.add(gemm_cost(cm, "expert fc1", x.expert_tokens, x.H, x.M, x.el));
  ex.add(memory_cost(cm, "expert ReLU", 2 * x.el * x.expert_tokens * x.H * x.eb));
  ex.add(gemm_cost(cm, "expert fc2", x.expert_tokens, x.M, x.H, x.el));
  auto& cb = c.combine_forward;
  cb.add(gemm_cost(cm, "combine einsum (GSEC,EGCM->GSM)", x.S, x.M, ec, x.g));
  cb.add(memory_cost(cm, "residual add", 3 * x.T * x.M * x.eb));

  auto& cbb = c.combine_backward;
  cbb.add(memory_cost(cm, "residual add backward", 2 * x.T * x.M * x.eb));
  cbb.add(gemm_cost(cm, "combine einsum dgrad (expert outputs)", ec, x.M, x.S, x.g));
  cbb.add(gemm_cost(cm, "combine einsum dgrad (combine weights)", x.S, ec, x.M, x.g));
  auto& exb = c.experts_backward;
  linear_backward(exb, cm, "expert fc2 dgrad", "expert fc2 wgrad", x.expert_tokens, x.M, x.H, x.el);
  exb.add(memory_cost(cm, "expert ReLU backward", 3 * x.el * x.expert_tokens * x.H * x.eb));
  linear_backward(exb, cm, "expert fc1 dgrad", "expert fc1 wgrad", x.expert_tokens, x.H, x.M, x.el);
  auto& gdb = c.gate_dispatch_backward;
  gdb.add(gemm_cost(cm, "dispatch einsum dgrad", x.S, x.M, ec, x.g));
  gdb.add(memory_cost(cm, "combine weights to gate gradient", kCombineBackwardPasses * mask * x.eb));
  gdb.add(memory_cost(cm, "gate softmax backward (fp32)", kGateBackwardPasses * x.T * x.E * kGateBytes));
  linear_backward(gdb, cm, "gate logits dgrad", "gate logits wgrad", x.S, x.E, x.M, x.g);
  gdb.add(memory_cost(cm, "layernorm backward", 3 * x.T * x.M * x.eb));

  // Embeddings of both stacks, the decoder's logits over the vocabulary and fp32 softmax cross-entropy.
  c.head_forward.add(memory_cost(cm, "embedding lookups (source and target)", 2 * 2 * x.T * x.M * x.eb));
  c.head_forward.add(gemm_cost(cm, "logits", x.T, x.V, x.M));
  c.head_forward.add(memory_cost(cm, "softmax cross-entropy (fp32)", x.T * x.V * (x.eb + 4 + 4 + 8)));
  c.head_backward.add(memory_cost(cm, "cross-entropy backward", x.T * x.V * (4 + 4 + x.eb)));
  linear_backward(c.head_backward, cm, "logits dgrad", "logits wgrad", x.T, x.V, x.M);
  c.head_backward.add(memory_cost(cm, "embedding backward (scatter-add)", 2 * 2 * x.T * x.M * x.eb));
  return c;
}

double gshard_model_flops(const GShardConfig& w) {
  Dims x = dims(w);
  double tokens = static_cast<double>(w.batch_tokens);
  double M = x.M, H = x.H, s = x.s;
  double attention = 2 * tokens * 4 * M * M + 2 * 2 * tokens * s * M;  // projections + scores + values
  double Lh = static_cast<double>(w.layers_per_stack()), moe = static_cast<double>(w.moe_layers());
  double dense_ffn = 2 * tokens * 2 * M * H;
  // Expert FFNs count only the token copies that experts process: top_k per token, but at most the
  // capacity of every expert in every group; tokens over capacity are dropped (they skip the MoE
  // sublayer through the residual), and counting them made MFU exceed HFU at small capacity factors.
  double groups = static_cast<double>(w.devices) * x.g;
  double routed = std::min(w.top_k * tokens, groups * x.E * x.C);
  double experts = 2 * routed * 2 * M * H;
  double forward = Lh * attention + Lh * 2 * attention + (2 * Lh - moe) * dense_ffn +
                   moe * (2 * tokens * M * x.E + experts) + 2 * tokens * x.V * M;
  return 3 * forward;
}

double gshard_hardware_flops(const GShardLayerCosts& c, const GShardConfig& w) {
  double Lh = static_cast<double>(w.layers_per_stack()), moe = static_cast<double>(w.moe_layers());
  double moe_f = c.gate_dispatch_forward.flops + c.experts_forward.flops + c.combine_forward.flops;
  double moe_b = c.gate_dispatch_backward.flops + c.experts_backward.flops + c.combine_backward.flops;
  double dense_f = c.dense_ffn_forward.flops, dense_b = c.dense_ffn_backward.flops;
  double fwd = Lh * c.attention_forward.flops + Lh * c.decoder_attention_forward.flops + moe * moe_f +
               (2 * Lh - moe) * dense_f;
  double bwd = Lh * c.attention_backward.flops + Lh * c.decoder_attention_backward.flops + moe * moe_b +
               (2 * Lh - moe) * dense_b;
  double per_device =
      fwd * (w.rematerialization ? 2 : 1) + bwd + c.head_forward.flops + c.head_backward.flops;
  return per_device * w.devices;
}

double gshard_adafactor_bytes(const GShardConfig& w) {
  // Adafactor with factored second moments, no momentum, update clipping and the parameter-scaled relative
  // step (Shazeer & Stern 2018, Algorithm 4 and Sec. 6-8; GShard trains with it, Lepikhin et al. Sec. 5),
  // per weight: the gradient read for its squared row and column sums (2 reductions along different
  // axes: 2 reads) and for the update U = G / sqrt(V) (1 read, U written), U read for its RMS (clipping),
  // the weight read for its RMS (relative step) and again with U for the update, the weight written: 9
  // accesses of weight_bytes. The factored statistics themselves are rows and columns (negligible).
  constexpr double kAccesses = 9;
  return gshard_device_params(w) * kAccesses * w.weight_bytes;
}

MemoryBreakdown gshard_memory(const GShardConfig& w, const calibration::DeviceProfile& profile) {
  Dims x = dims(w);
  double params = gshard_device_params(w);
  MemoryBreakdown m;
  m.weights = params * w.weight_bytes;
  m.gradients = params * w.weight_bytes;
  if (w.adafactor) {  // factored second moments: one row and one column vector per matrix (fp32)
    double Lh = static_cast<double>(w.layers_per_stack()), moe = static_cast<double>(w.moe_layers());
    double attention = (x.M + 3 * x.M) + (x.M + x.M);
    double ffn = 2 * (x.M + x.H);
    double vectors = 3 * Lh * attention + (2 * Lh - moe) * ffn + moe * (x.M + x.E + x.el * ffn) + x.V + x.M;
    m.optimizer = 4 * vectors;
  } else {
    m.optimizer = 8 * params;  // Adam m and v in fp32
  }
  // Activations of one layer kept for its backward, per kind of layer.
  double heads = x.sequences * x.a;
  double attention = (5 * x.T * x.M + 2 * heads * x.s * x.s) * x.eb;
  double dense_ffn = (x.T * x.M + 2 * x.T * x.H) * x.eb;
  double routed = x.el * x.expert_tokens;  // token slots this device's experts process
  double moe_ffn = x.T * x.E * 4 * 2 + 2 * x.g * x.S * x.E * x.C * x.eb + 2 * x.g * x.E * x.C * x.M * x.eb +
                   (2 * routed * x.H + routed * x.M) * x.eb + x.T * x.M * x.eb;
  double Lh = static_cast<double>(w.layers_per_stack()), moe = static_cast<double>(w.moe_layers());
  double all_layers =
      Lh * attention + Lh * 2 * attention + (2 * Lh - moe) * dense_ffn + moe * moe_ffn + x.T * x.M * x.eb;
  double logits = x.T * x.V * (x.eb + 4 + 4);
  if (w.rematerialization)  // every layer's input, plus the largest layer rebuilt during its backward
    m.activations =
        2 * Lh * x.T * x.M * x.eb + x.T * x.M * x.eb + 2 * attention + std::max(moe_ffn, dense_ffn);
  else
    m.activations = all_layers;
  m.activations += logits;
  m.buffers = 2 * gshard_all_to_all_bytes(w);  // all-to-all send and receive buffers
  m.framework = profile.framework_memory_bytes;
  return m;
}

}  // namespace podsim::workload
