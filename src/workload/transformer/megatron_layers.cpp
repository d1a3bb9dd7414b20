// Per-chunk compute of the Megatron step: the kernels of a model chunk's layers in one pass as one task,
// with the chunk's tensor-parallel collectives merged into one phase.
#include <algorithm>
#include <cmath>

#include "megatron_step_builder.hpp"
#include "podsim/network/collective.hpp"

namespace podsim::workload::megatron {
namespace {

void append(std::vector<TpCollective>& to, const std::vector<TpCollective>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

}  // namespace

int StepBuilder::tp_plan(int stage, const std::vector<TpCollective>& per_layer, double layers,
                         const std::vector<TpCollective>& extra) {
  if (layout_.tp == 1) return -1;
  std::vector<plan::CommPlan> plans;
  auto group = layout_.tp_group(0, stage);
  for (const auto& c : per_layer)
    plans.push_back(network::scaled(
        network::plan_collective(topo_, network::make_collective(c.kind, group, c.bytes)), layers));
  for (const auto& c : extra)
    plans.push_back(network::plan_collective(topo_, network::make_collective(c.kind, group, c.bytes)));
  plan::CommPlan merged{network::serial_merge(plans)};
  if (merged[0].flows.empty()) return -1;
  return g_.add_plan(std::move(merged));
}

StepBuilder::ChunkWork StepBuilder::chunk_work(int stage, int chunk, Pass pass) {
  auto key = std::make_tuple(stage, chunk, pass == Pass::forward);
  auto it = chunk_cache_.find(key);
  if (it != chunk_cache_.end()) return it->second;
  bool has_embedding = stage == 0 && chunk == 0;
  bool has_output = stage == p_ - 1 && chunk == v_ - 1;
  double L = layers_per_chunk_;
  ChunkWork work;
  std::vector<TpCollective> per_layer, extra;
  if (pass == Pass::forward) {
    work.seconds = L * layer_.forward.seconds;
    per_layer = layer_.forward.tp;
    if (has_embedding)
      work.seconds += head_.embedding_forward.seconds, append(extra, head_.embedding_forward.tp);
    if (has_output) work.seconds += head_.output_forward.seconds, append(extra, head_.output_forward.tp);
  } else {
    work.seconds = L * (layer_.recompute.seconds + layer_.backward.seconds);
    per_layer = layer_.recompute.tp;
    append(per_layer, layer_.backward.tp);
    if (has_output) work.seconds += head_.output_backward.seconds, append(extra, head_.output_backward.tp);
    if (has_embedding)
      work.seconds += head_.embedding_backward.seconds, append(extra, head_.embedding_backward.tp);
  }
  work.plan = tp_plan(stage, per_layer, L, extra);
  chunk_cache_[key] = work;
  return work;
}

int StepBuilder::bucket_count(double bytes) const {
  // Clamped as a double before the cast: a tiny bucket size must not overflow the count. Finer than 64
  // buckets changes nothing visible but costs simulation time.
  double wanted = std::ceil(bytes / w_.parallel.dp_bucket_bytes);
  return static_cast<int>(std::clamp(wanted, 1.0, 64.0));
}

void StepBuilder::add_chunk_pass(int s, const StageStep& step, bool final_backward) {
  if (w_.parallel.zero >= 3 && layout_.dp > 1) return add_fsdp_pass(s, step);
  if (overlaps_param_gather(step)) return add_gathered_forward(s, step);
  ChunkWork work = chunk_work(s, step.chunk, step.pass);
  bool overlap_dp = final_backward && layout_.dp > 1 && w_.parallel.dp_overlap;
  if (!overlap_dp) {
    g_.add_task({.kind = step.pass == Pass::forward ? TaskKind::forward : TaskKind::backward,
                 .stream = compute_stream_[s],
                 .stage = s,
                 .compute_seconds = work.seconds,
                 .plan = work.plan,
                 .comm_category = Category::tp,
                 .microbatch = step.microbatch,
                 .chunk = step.chunk});
    return;
  }
  // Final backward of a chunk with overlapped gradient reduction (reduce-scatter with ZeRO 1/2): split
  // it into one piece per gradient bucket; each bucket's reduction starts when its piece is done (buckets
  // fill from the last layer to the first, as in PyTorch DDP and Megatron's overlapped reduction). Every
  // piece but the first runs beside the previous bucket's reduction and is slowed for as long as that
  // runs (the first may still overlap an earlier chunk's buckets; not counted).
  double grads = chunk_params(s, step.chunk) * w_.training.grad_reduce_bytes;
  int buckets = bucket_count(grads);
  int piece_plan = work.plan >= 0 ? g_.add_plan(network::scaled(g_.plans[work.plan], 1.0 / buckets)) : -1;
  int bucket_plan = dp_plan(s, grads / buckets);
  double piece = work.seconds / buckets;
  for (int b = 0; b < buckets; ++b) {
    int id =
        g_.add_task({.kind = TaskKind::backward,
                     .stream = compute_stream_[s],
                     .stage = s,
                     .compute_seconds = b == 0 ? piece : overlapped_seconds(piece, idle_seconds(bucket_plan)),
                     .plan = piece_plan,
                     .comm_category = Category::tp,
                     .microbatch = step.microbatch,
                     .chunk = step.chunk});
    g_.add_comm(TaskKind::dp, dp_stream_[s], s, bucket_plan, Category::dp, {id});
  }
}

}  // namespace podsim::workload::megatron
