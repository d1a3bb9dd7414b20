#include "podsim/workload/transformer/context_parallel.hpp"

#include <array>

#include "podsim/workload/transformer/precision_bytes.hpp"

namespace podsim::workload {
namespace {

bool cp_active(const WorkloadConfig& w) {
  return w.parallel.cp > 1;
}

// Width of one token's keys plus values on one tensor-parallel rank, the block ring attention passes on.
// Grouped-query attention sends only the query groups' K and V (Megatron-Core's ring exchanges K and V
// before they are expanded to the query heads; tp divides kv_heads, model_checks.cpp); multi-head latent
// attention sends every head's up-projected key (qk_nope + qk_rope wide) and value (v_head_dim wide), as
// Transformer Engine's context-parallel attention receives them.
double kv_width_per_rank(const WorkloadConfig& w) {
  const auto& m = w.model;
  double tp = w.parallel.tp;
  if (m.attention_type == AttentionType::mla)
    return static_cast<double>(m.heads) / tp *
           static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim);
  return 2 * static_cast<double>(m.query_groups()) / tp * static_cast<double>(m.dim());
}

bool recompute_redoes_attention(Recompute r) {
  return r != Recompute::none;  // full recomputes the layer, selective the attention core
}

// The two of 2*cp sequence chunks rank r holds: r and 2cp-1-r (Megatron-Core's get_batch_on_this_cp_rank).
std::array<int, 2> chunks_of(int cp, int rank) {
  return {rank, 2 * cp - 1 - rank};
}

}  // namespace

double cp_causal_block_work(int cp, int rank, int step) {
  int kv_rank = ((rank - step) % cp + cp) % cp;
  double work = 0;
  for (int q : chunks_of(cp, rank))
    for (int k : chunks_of(cp, kv_rank)) work += q > k ? 1.0 : q == k ? 0.5 : 0.0;  // causal: keys up to q
  return work;
}

double cp_kv_block_bytes(const WorkloadConfig& w, int micro_batch) {
  double local_tokens = static_cast<double>(micro_batch) * w.model.seq_len / w.parallel.cp;
  // In 16 bits under the fp8 formats: Transformer Engine quantizes the linear layers' GEMMs, not attention.
  return local_tokens * kv_width_per_rank(w) * activation_bytes(w.training);
}

int cp_ring_steps(const WorkloadConfig& w) {
  return w.parallel.cp - 1;
}

double cp_ring_step_bytes(const WorkloadConfig& w, int micro_batch, CpPass pass) {
  if (!cp_active(w)) return 0;
  double kv = cp_kv_block_bytes(w, micro_batch);
  switch (pass) {
    case CpPass::forward: return kv;
    case CpPass::recompute: return recompute_redoes_attention(w.training.recompute) ? kv : 0;
    case CpPass::backward:
    default: return 2 * kv;  // the KV block and the partial dKV travel together
  }
}

std::vector<TpCollective> cp_gather_collectives(const WorkloadConfig& w, int micro_batch, CpPass pass) {
  if (!cp_active(w) || w.parallel.cp_algorithm != CpAlgorithm::all_gather) return {};
  using network::CollectiveKind;
  double gathered = w.parallel.cp * cp_kv_block_bytes(w, micro_batch);
  bool recomputed = recompute_redoes_attention(w.training.recompute);
  switch (pass) {
    case CpPass::forward: return {{CollectiveKind::all_gather, gathered}};
    case CpPass::recompute:
      if (recomputed) return {{CollectiveKind::all_gather, gathered}};
      return {};
    case CpPass::backward:
    default:
      if (recomputed) return {{CollectiveKind::reduce_scatter, gathered}};
      return {{CollectiveKind::all_gather, gathered}, {CollectiveKind::reduce_scatter, gathered}};
  }
}

double cp_buffer_bytes(const WorkloadConfig& w, int micro_batch) {
  if (!cp_active(w)) return 0;
  double kv = cp_kv_block_bytes(w, micro_batch);
  if (w.parallel.cp_algorithm == CpAlgorithm::all_gather) return 2 * w.parallel.cp * kv;  // K,V + dK,dV
  return 2 * kv + 2 * kv;  // KV double-buffered, and in the backward dKV double-buffered
}

}  // namespace podsim::workload
