#include "podsim/workload/transformer/memory_model.hpp"

#include <algorithm>
#include <stdexcept>

#include "podsim/workload/transformer/context_parallel.hpp"
#include "podsim/workload/transformer/layer_ops.hpp"
#include "podsim/workload/transformer/mla_math.hpp"
#include "podsim/workload/transformer/moe_memory.hpp"
#include "podsim/workload/transformer/mtp_ops.hpp"
#include "podsim/workload/transformer/optimizer_state.hpp"
#include "podsim/workload/transformer/pipeline_split.hpp"
#include "podsim/workload/transformer/precision_bytes.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"

namespace podsim::workload {

double stage_params(const WorkloadConfig& w, int stage) {
  const auto& m = w.model;
  const auto& p = w.parallel;
  double t = p.tp;
  double per_layer = layer_params(m) / t;
  double params = per_layer * stage_layers(w, stage) + moe_stage_params_delta(w, stage);  // MoE: moe_memory
  double word_embedding = static_cast<double>(m.vocab) * m.hidden / t;
  // Learned positions are replicated over tp; RoPE has none (embedding_params counts them).
  if (stage == 0) params += embedding_params(m) - word_embedding * t + word_embedding;
  if (stage == p.pp - 1) {
    params += final_norm_params(m);
    // The output layer: its own weights when untied; when tied, the last stage's copy of the embedding.
    if (!m.tied_embeddings || p.pp > 1) params += word_embedding;
    params += mtp_params(m) / t;  // multi-token prediction modules (shared embedding and head)
  }
  return params;
}

namespace {

// Activation bytes one layer stores for its backward, from the tensors each op saves (Korthikanti et al.
// Sec. 4.1, which counts 34*s*b*h + 5*a*s^2*b bytes at 16 bits for GPT): `replicated` over the tensor-
// parallel ranks (norm inputs, dropout masks, the inputs of the QKV and fc1 GEMMs), `split` over them (Q, K,
// V, the output projection and fc2 inputs, the MLP activation's input), `scores` (softmax output, dropout
// mask and output, per query head).
// Of these, what the selective recompute modules (recompute_modules.hpp) free: the dense MLP's fc1 input
// (replicated) and activation and fc2 inputs (split); MLA's Q, K, V (split) and, as the up-projection
// checkpoint keeps the bf16 latents in place of the up-projections' saved inputs, `latent_checkpoint` more
// (replicated; 0 unless fp8).
struct LayerActivations {
  double replicated = 0, split = 0, scores = 0;
  double mlp_replicated = 0, mlp_split = 0, mla_qkv_split = 0, latent_checkpoint = 0;
};

LayerActivations layer_activations(const WorkloadConfig& w, int micro_batch) {
  const auto& m = w.model;
  double sb = static_cast<double>(m.seq_len) / w.parallel.cp * micro_batch, h = m.hidden,
         ab = activation_bytes(w.training);
  double a = m.heads, g = m.query_groups(), d = m.dim(), f = m.ffn_hidden;
  // Dropout masks: one byte per element, none without dropout (torch returns the input at p = 0).
  const double kMask = dropout_mask_bytes(m);
  // GEMM inputs saved for the wgrad GEMM: under fp8 Transformer Engine keeps their quantized copy (1 byte),
  // not the bf16 tensor; the attention core's Q, K, V, norm inputs and the MLP activation's input stay bf16.
  double gemm_in =
      is_fp8_family(w.training.precision) ? topology::bytes_per_element(w.training.precision) : ab;
  LayerActivations x;
  x.replicated = sb * h * (2 * ab + 2 * kMask + 2 * gemm_in);  // norm inputs, masks, QKV and fc1 inputs
  double mlp_input = m.mlp == Mlp::swiglu ? 2 * f : f;         // SwiGLU keeps the gate and up halves
  x.split = sb * (ab * ((a + 2 * g) * d + mlp_input) + gemm_in * (a * d + f));  // + out-proj, fc2 inputs
  x.mlp_replicated = sb * h * gemm_in;
  x.mlp_split = sb * (ab * mlp_input + gemm_in * f);
  if (is_mla(m)) {
    // MLA: the attention core's Q and K of nope + rope and V of v_head_dim per head (d = v_head_dim is the
    // output projection's input); the latents, replicated (split by sequence parallelism), each kept as
    // its norm's input and as the up-projection's input, and the shared k_rope.
    double qk = mla_qk_head_dim(m), lat = static_cast<double>(m.q_lora_rank + m.kv_lora_rank);
    x.split = sb * (ab * (a * (2 * qk + d) + mlp_input) + gemm_in * (a * d + f));
    x.replicated += sb * (lat * (ab + gemm_in) + ab * m.qk_rope_head_dim);
    x.mla_qkv_split = sb * ab * a * (2 * qk + d);
    x.latent_checkpoint = sb * lat * (ab - gemm_in);
  }
  // Unfused: softmax output, dropout mask and output, s x s per query head (without dropout the softmax
  // output alone: the dropout returns it). Flash attention keeps only
  // its fp32 logsumexp per query row (the scores are rebuilt inside the backward kernel).
  x.scores = w.training.attention == Attention::flash
                 ? sb * a * 4
                 : sb * m.seq_len * a * ((kMask > 0 ? 2 : 1) * ab + kMask);
  return x;
}

}  // namespace

double layer_activation_bytes(const WorkloadConfig& w, int micro_batch, Recompute recompute) {
  // With context parallelism a rank holds s/cp tokens, and its attention scores are its queries against
  // the whole sequence (layer_activations keeps the full s there).
  double t = w.parallel.tp;
  bool sp = w.parallel.sequence_parallel;
  LayerActivations x = layer_activations(w, micro_batch);
  double sbh_bytes = static_cast<double>(w.model.seq_len) / w.parallel.cp * micro_batch * w.model.hidden *
                     activation_bytes(w.training);
  double replicated = sp ? x.replicated / t : x.replicated;
  switch (recompute) {
    case Recompute::full: return sp ? sbh_bytes / t : sbh_bytes;  // the layer's input checkpoint
    case Recompute::selective: {
      // What the recompute modules (training.recompute_modules) rebuild instead of storing.
      const RecomputeModules& r = w.training.recompute_modules;
      double split = x.split + (r.core_attn ? 0 : x.scores);
      if (r.mlp) {
        replicated -= sp ? x.mlp_replicated / t : x.mlp_replicated;
        split -= x.mlp_split;
      }
      if (r.mla_up_proj && is_mla(w.model)) {
        replicated += sp ? x.latent_checkpoint / t : x.latent_checkpoint;
        split -= x.mla_qkv_split;
      }
      return replicated + split / t;
    }
    case Recompute::none:
    default: return replicated + (x.split + x.scores) / t;
  }
}

double recompute_working_bytes(const WorkloadConfig& w, int micro_batch, Recompute recompute) {
  // The layer whose backward runs holds all its activations; what it stored is already counted, the
  // rest (all of it but the input checkpoint with full recomputation, the attention core with selective)
  // is rebuilt now and held once. Counting the whole layer here (as podsim did) made full recomputation
  // need more memory than selective when a stage holds few layers.
  return layer_activation_bytes(w, micro_batch, Recompute::none) -
         layer_activation_bytes(w, micro_batch, recompute);
}

double embedding_in_flight(const WorkloadConfig& w, int micro_batch, int stage_in_flight) {
  // Only the first model chunk holds the embedding, so only its microbatches keep the mask: the stage's
  // chunk passes in flight, but never more than the step's microbatches (each passes chunk 0 once). With
  // one chunk per stage the two agree; with the interleaved schedule most passes in flight belong to later
  // chunks (the bound is an upper one: Megatron's warm-up takes chunk 0 of pp microbatches at a time).
  long long microbatches =
      w.training.global_batch / (static_cast<long long>(std::max(1, w.parallel.dp)) * micro_batch);
  return static_cast<double>(std::min<long long>(stage_in_flight, std::max(1LL, microbatches)));
}

double loss_bytes_per_logit(const WorkloadConfig& w) {
  double eb = activation_bytes(w.training);
  return w.training.fused_cross_entropy ? eb : eb + 4 + 4;
}

double zero_shard_ranks(const ParallelConfig& p) {
  // Context-parallel ranks hold the same weights and shard along with their data-parallel rank.
  return static_cast<double>(p.shard_group > 0 ? p.shard_group : p.dp) * p.cp;
}

double zero3_gathered_params(const WorkloadConfig& w, int stage) {
  // FSDP wraps each transformer block as one unit and keeps at most two gathered at a time: the one
  // computing and the next, prefetched (forward_prefetch / BACKWARD_PRE). DeepSpeed ZeRO-3 similarly
  // bounds live gathered parameters by stage3_prefetch_bucket_size / stage3_max_live_parameters, a few
  // layers' worth. The largest unit of a stage is a layer or, on the first and last stage, the word
  // embedding; never more than the stage itself. Without resharding after the forward every unit the
  // forward gathered stays until its backward: with a microbatch between the two (and, pipelined, one in
  // flight through every chunk of the stage) that is all of the stage's dense parameters.
  if (!w.parallel.reshard_after_forward) return stage_params(w, stage) - expert_stage_params(w, stage);
  constexpr double kLiveUnits = 2;
  const auto& m = w.model;
  double largest = layer_params(m) / w.parallel.tp;
  bool has_embedding = stage == 0 || stage == w.parallel.pp - 1;
  if (has_embedding) largest = std::max(largest, static_cast<double>(m.vocab) * m.hidden / w.parallel.tp);
  return std::min(kLiveUnits * largest, stage_params(w, stage));
}

std::vector<MemoryBreakdown> stage_memory(const WorkloadConfig& w, int micro_batch, int virtual_stages,
                                          const std::vector<int>& peak_in_flight,
                                          const calibration::DeviceProfile& profile) {
  const auto& p = w.parallel;
  double eb = activation_bytes(w.training);
  double dp = zero_shard_ranks(p);  // ZeRO divides by the shard group (x cp)
  if (!splits_evenly(w, virtual_stages))
    throw std::logic_error(
        "stage_memory: the layer slots do not split evenly into pp x virtual_stages chunks");
  double stored = layer_activation_bytes(w, micro_batch, w.training.recompute);
  double working = recompute_working_bytes(w, micro_batch, w.training.recompute);
  // A stage of MoE layers only rebuilds no dense MLP (recompute module mlp skips MoE layers).
  double working_moe_only = working;
  if (w.training.recompute == Recompute::selective && w.training.recompute_modules.mlp) {
    WorkloadConfig keep = w;
    keep.training.recompute_modules.mlp = false;
    working_moe_only -= layer_activation_bytes(keep, micro_batch, Recompute::selective) - stored;
  }
  double local_tokens = static_cast<double>(w.model.seq_len) / p.cp * micro_batch;  // s/cp per rank
  double sbh = local_tokens * w.model.hidden;
  // The embedding's dropout mask (one byte an element) covers the embedding output, which Megatron
  // scatters to the sequence-parallel region before the dropout (LanguageModelEmbedding.forward): s/tp of
  // the tokens per rank with sequence parallelism.
  double embedding_mask = w.model.dropout > 0 ? (p.sequence_parallel ? sbh / p.tp : sbh) : 0;
  std::vector<MemoryBreakdown> out;
  for (int s = 0; s < p.pp; ++s) {
    // Routed experts shard over the expert data-parallel ranks, the rest over dp x cp (moe_memory.hpp).
    double experts = expert_stage_params(w, s), params = stage_params(w, s) - experts;
    double edp = expert_data_parallel(p);
    auto sharded = [&](int stage) {
      return params / (p.zero >= stage ? dp : 1) + experts / (p.zero >= stage ? edp : 1);
    };
    MemoryBreakdown mb;
    mb.weights = sharded(3) * weight_bytes(w.training);
    mb.gradients = sharded(2) * w.training.main_grad_bytes;
    mb.optimizer = sharded(1) * optimizer_state_bytes(w.training.optimizer);  // main weights + Adam m, v
    int in_flight = s < static_cast<int>(peak_in_flight.size()) ? peak_in_flight[s] : 1;
    // The stage's mean chunk: with the embedding or the loss in the split one chunk holds a layer fewer.
    double layers_per_chunk = static_cast<double>(stage_layers(w, s)) / virtual_stages;
    bool moe_only = stage_moe_layers(w, s) >= stage_layers(w, s);
    mb.activations = in_flight * layers_per_chunk * stored + (moe_only ? working_moe_only : working);
    double moe_per_chunk = static_cast<double>(stage_moe_layers(w, s)) / virtual_stages;
    mb.activations += in_flight * moe_per_chunk * moe_activation_delta(w, micro_batch, w.training.recompute);
    if (moe_per_chunk > 0) mb.activations += moe_recompute_working_bytes(w, micro_batch);  // MoE recompute
    if (s == 0) mb.activations += embedding_in_flight(w, micro_batch, in_flight) * embedding_mask;
    if (s == p.pp - 1)  // logits and fp32 softmax of the microbatch in flight (fused: the logits alone)
      mb.activations += local_tokens * w.model.vocab / p.tp * loss_bytes_per_logit(w) +
                        mtp_activation_bytes(w, micro_batch);  // MTP: its last chunk has one in flight
    mb.buffers = 2 * 2 * sbh * eb;                  // p2p send and receive buffers, both directions
    mb.buffers += cp_buffer_bytes(w, micro_batch);  // context parallelism: KV blocks in flight
    // ZeRO-3: the other ranks' shards of the units being computed are gathered in; the local shard is
    // already in `weights`, so weights + buffer never exceed the unsharded weights.
    if (p.zero >= 3) mb.buffers += zero3_gathered_params(w, s) * (1 - 1 / dp) * eb;
    // ... and a MoE layer's routed experts from the other expert data-parallel ranks (two units live, or
    // every MoE layer of the stage without resharding after the forward).
    double moe_layers = stage_moe_layers(w, s);
    double live_moe = p.reshard_after_forward ? std::min<double>(2, moe_layers) : moe_layers;
    if (p.zero >= 3 && moe_layers > 0)
      mb.buffers += live_moe * expert_params_per_layer(w) * (1 - 1 / edp) * eb;
    mb.framework = profile.framework_memory_bytes;
    out.push_back(mb);
  }
  return out;
}

}  // namespace podsim::workload
