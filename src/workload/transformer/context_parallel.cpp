#include "podsim/workload/transformer/context_parallel.hpp"

#include <array>

namespace podsim::workload {
namespace {

bool cp_active(const WorkloadConfig& w) {
  return w.parallel.cp > 1;
}

// KV heads per tensor-parallel rank and their width. GPT-style multi-head attention here: every head
// has its own K and V (grouped-query attention, model.kv_heads, changes only this line).
double kv_heads_per_rank(const WorkloadConfig& w) {
  return static_cast<double>(w.model.heads) / w.parallel.tp;
}

double head_dim(const WorkloadConfig& w) {
  return static_cast<double>(w.model.hidden) / w.model.heads;
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
  return 2 * local_tokens * kv_heads_per_rank(w) * head_dim(w) * element_bytes(w.training.precision);
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
