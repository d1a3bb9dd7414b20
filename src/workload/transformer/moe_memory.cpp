#include "podsim/workload/transformer/moe_memory.hpp"

#include "podsim/workload/transformer/moe_costs.hpp"
#include "podsim/workload/transformer/moe_math.hpp"
#include "podsim/workload/transformer/pipeline_layout.hpp"
#include "podsim/workload/transformer/pipeline_split.hpp"
#include "podsim/workload/transformer/precision_bytes.hpp"
#include "podsim/workload/transformer/recompute_modules.hpp"

namespace podsim::workload {

double expert_data_parallel(const ParallelConfig& p) {
  return rank_layout(p).expert_dp();
}

long long stage_first_layer(const WorkloadConfig& w, int stage) {
  return chunk_first_layer(w, 1, stage, 0);
}

long long stage_moe_layers(const WorkloadConfig& w, int stage) {
  // A pipeline layout's chunks differ: count each chunk's own layers (the even split keeps its contiguous
  // approximation, which the golden results were taken with).
  if (has_layout(w.parallel)) {
    int v = w.parallel.virtual_stages;
    long long moe = 0;
    for (int c = 0; c < v; ++c)
      moe += moe_layers_in(w, chunk_first_layer(w, v, stage, c), chunk_layers(w, v, stage, c));
    return moe;
  }
  return moe_layers_in(w, stage_first_layer(w, stage), stage_layers(w, stage));
}

double moe_dense_delta_per_layer(const WorkloadConfig& w) {
  if (!w.moe.enabled()) return 0;
  double dense_mlp = mlp_params(w.model, static_cast<double>(w.model.ffn_hidden));
  // The router is replicated on every TP rank (Megatron-Core TopKRouter); the shared experts are split.
  return router_params(w) + (shared_expert_params(w) - dense_mlp) / w.parallel.tp;
}

double expert_params_per_layer(const WorkloadConfig& w) {
  if (!w.moe.enabled()) return 0;
  return static_cast<double>(w.moe.experts) / w.parallel.ep * routed_expert_params(w) / w.parallel.etp;
}

double expert_stage_params(const WorkloadConfig& w, int stage) {
  return stage_moe_layers(w, stage) * expert_params_per_layer(w);
}

double moe_stage_params_delta(const WorkloadConfig& w, int stage) {
  return stage_moe_layers(w, stage) * (moe_dense_delta_per_layer(w) + expert_params_per_layer(w));
}

double moe_act_freed_bytes(const WorkloadConfig& w, int micro_batch) {
  if (!recomputes_moe_act(w)) return 0;
  MoeTraffic x = moe_traffic(w, micro_batch);
  double local = static_cast<double>(w.moe.experts) / w.parallel.ep;
  double received = x.mean_expert_tokens * (local - 1) + x.busiest_expert_tokens;
  double gemm_in = is_fp8_family(w.training.precision) ? topology::bytes_per_element(w.training.precision)
                                                       : activation_bytes(w.training);
  return received * gemm_in * static_cast<double>(w.moe.ffn_hidden) / w.parallel.etp;
}

double moe_norm_freed_bytes(const WorkloadConfig& w, int micro_batch) {
  if (!recomputes_moe_norm(w)) return 0;
  return moe_traffic(w, micro_batch).routed_tokens * w.model.hidden * activation_bytes(w.training);
}

double moe_recompute_working_bytes(const WorkloadConfig& w, int micro_batch) {
  // The layer whose backward runs holds what its recompute rebuilt, once (as recompute_working_bytes).
  return moe_act_freed_bytes(w, micro_batch) + moe_norm_freed_bytes(w, micro_batch);
}

double moe_activation_delta(const WorkloadConfig& w, int micro_batch, Recompute recompute) {
  if (!w.moe.enabled() || recompute == Recompute::full) return 0;
  const auto& m = w.model;
  const auto& p = w.parallel;
  double ab = activation_bytes(w.training);
  double gemm_in =
      is_fp8_family(w.training.precision) ? topology::bytes_per_element(w.training.precision) : ab;
  double sb = static_cast<double>(m.seq_len) / p.cp * micro_batch, h = m.hidden, t = p.tp;
  double swiglu = m.mlp == Mlp::swiglu ? 2 : 1;
  // The dense MLP's stored tensors (memory_model.cpp): fc1 input (split by sequence parallelism), the
  // activation's input (2f for SwiGLU) and fc2's input, split over tp.
  double f = m.ffn_hidden;
  double dense = sb * h * gemm_in / (p.sequence_parallel ? t : 1) + sb * (ab * swiglu * f + gemm_in * f) / t;
  // With recompute_modules mlp the dense layer stored none of them (MoE layers' blocks are not recomputed:
  // Megatron-Core's recompute_mlp skips an MoELayer).
  if (recompute == Recompute::selective && w.training.recompute_modules.mlp) dense = 0;
  MoeTraffic x = moe_traffic(w, micro_batch);
  double local = static_cast<double>(w.moe.experts) / p.ep;
  double received = x.mean_expert_tokens * (local - 1) + x.busiest_expert_tokens;
  double fe = static_cast<double>(w.moe.ffn_hidden) / p.etp;
  double experts = received * (h * gemm_in + ab * swiglu * fe + gemm_in * fe);  // fc1 in, act in, fc2 in
  bool selective = recompute == Recompute::selective;
  if (selective)
    experts -= moe_act_freed_bytes(w, micro_batch);  // recompute_modules moe_act: fc2's input is rebuilt
  // What the probabilities' gradient needs (moe.probs): every expert output where the unpermute weights
  // them, only the fp32 probability of each routed copy where the activation does (its input is kept anyway).
  double copies = x.routed_tokens * w.moe.top_k;
  double unpermute = w.moe.probs == MoeProbs::unpermute ? copies * h * ab : copies * 4;
  double router = x.routed_tokens * (h * ab + w.moe.experts * 4);  // router input and fp32 probabilities
  if (selective)
    router -=
        moe_norm_freed_bytes(w, micro_batch);  // recompute_modules layernorm: the norm output is rebuilt
  double fs = static_cast<double>(w.moe.shared_experts * w.moe.shared_ffn_hidden) / t;
  double shared =
      w.moe.shared_experts > 0 ? sb * h * gemm_in / t + sb * (ab * swiglu * fs + gemm_in * fs) : 0;
  return experts + unpermute + router + shared - dense;
}

}  // namespace podsim::workload
