// Per-chunk compute of the Megatron step: the kernels of a model chunk's layers in one pass as one task,
// with the chunk's tensor-parallel collectives merged into one phase.
#include <algorithm>
#include <cmath>

#include "megatron_step_builder.hpp"
#include "podsim/network/collective.hpp"
#include "podsim/workload/transformer/gradient_buckets.hpp"
#include "podsim/workload/transformer/pipeline_split.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"

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
  auto group = layout_.tp_group(0, 0, stage);
  for (const auto& c : per_layer)
    plans.push_back(network::scaled(
        network::plan_collective(topo_, network::make_collective(c.kind, group, c.bytes)), layers));
  for (const auto& c : extra)
    plans.push_back(network::plan_collective(topo_, network::make_collective(c.kind, group, c.bytes)));
  plan::CommPlan merged{network::serial_merge(plans)};
  if (merged[0].flows.empty()) return -1;
  return g_.add_plan(std::move(merged));
}

void StepBuilder::split_tp_overlap(int stage, const PassCost& pass, double layers,
                                   std::vector<TpCollective>& serial, ChunkWork& work) {
  for (const auto& c : pass.tp) {
    if ((!tp_overlap_ && !c.async) || c.overlap_seconds <= 0) {
      serial.push_back(c);
      continue;
    }
    // Transformer Engine splits the GEMM and its collective into chunks and pipelines them (tp_overlap.hpp
    // says how per method): the exposed share of the bytes moves with nothing beside it (the pipeline
    // fills or drains), the rest while the window share of the GEMM computes, exposed only where it takes
    // longer. Identical layers make the `layers` copies of each pair one pair of `layers` times the work.
    double t = layout_.tp;
    double exposed = c.exposed_share >= 0 ? c.exposed_share : 1 / t;
    double window = c.window_share >= 0 ? c.window_share : (t - 1) / t;
    double hidden = layers * c.overlap_seconds * window;
    if (exposed > 0) serial.push_back({c.kind, c.bytes * exposed});
    work.overlaps.push_back({.seconds = hidden,
                             .plan = tp_plan(stage, {{c.kind, c.bytes * (1 - exposed)}}, layers, {}),
                             .category = Category::tp,
                             .slowed = !c.sm_costed});
    work.seconds -= hidden;
  }
}

double StepBuilder::windowed_layers_in_chunk(int stage, int chunk) const {
  return static_cast<double>(windowed_layers_in(w_.model, chunk_first_layer(w_, v_, stage, chunk),
                                                chunk_layers(w_, v_, stage, chunk)));
}

StepBuilder::ChunkWork StepBuilder::chunk_work(int stage, int chunk, Pass pass) {
  auto key = std::make_tuple(stage, chunk, pass == Pass::forward);
  auto it = chunk_cache_.find(key);
  if (it != chunk_cache_.end()) return it->second;
  if (moe_) return chunk_cache_[key] = moe_chunk_work(stage, chunk, pass);
  bool has_embedding = stage == 0 && chunk == 0;
  bool has_output = stage == p_ - 1 && chunk == v_ - 1;
  double L = chunk_layers(w_, v_, stage, chunk);
  ChunkWork work;
  std::vector<TpCollective> per_layer, extra;
  double windowed = windowed_layers_in_chunk(stage, chunk);
  if (pass == Pass::forward) {
    work.seconds = L * layer_.forward.seconds - windowed * window_.forward;
    split_tp_overlap(stage, layer_.forward, L, per_layer, work);
    if (has_embedding)
      work.seconds += head_.embedding_forward.seconds, append(extra, head_.embedding_forward.tp);
    if (has_output) work.seconds += head_.output_forward.seconds, append(extra, head_.output_forward.tp);
  } else {
    work.seconds = L * (layer_.recompute.seconds + layer_.backward.seconds) - windowed * window_.backward;
    split_tp_overlap(stage, layer_.recompute, L, per_layer, work);
    split_tp_overlap(stage, layer_.backward, L, per_layer, work);
    if (has_output) work.seconds += head_.output_backward.seconds, append(extra, head_.output_backward.tp);
    if (has_embedding)
      work.seconds += head_.embedding_backward.seconds, append(extra, head_.embedding_backward.tp);
  }
  work.plan = tp_plan(stage, per_layer, L, extra);
  add_context_parallel(stage, pass, L, work);
  chunk_cache_[key] = work;
  return work;
}

int StepBuilder::bucket_count(double params, double bytes_per_param) const {
  return gradient_bucket_count(w_.parallel, params, bytes_per_param);
}

void StepBuilder::add_chunk_pass(int s, const StageStep& step, bool final_backward) {
  if (w_.parallel.zero >= 3 && grad_ranks() > 1) return add_fsdp_pass(s, step);
  if (overlaps_param_gather(step)) return add_gathered_forward(s, step);
  if (combined_1f1b_ && step.combined_with_next) {
    paired_forward_[s] = step;  // emitted with the backward it is combined with
    return;
  }
  ChunkWork work = chunk_work(s, step.chunk, step.pass);
  if (paired_forward_[s]) {  // combined 1F1B: the forward first, both passes' all-to-alls with the backward
    StageStep forward = *paired_forward_[s];
    paired_forward_[s].reset();
    ChunkWork forward_work = chunk_work(s, forward.chunk, forward.pass);
    pair_passes(s, forward.chunk, step.chunk, forward_work, work);
    add_work(s, forward, forward_work, 1);
  }
  if (step.pass == Pass::backward && w_.parallel.zero == 2 && grad_ranks() > 1)
    return add_zero2_backward(s, step, work);
  bool overlap_dp = final_backward && grad_ranks() > 1 && w_.parallel.dp_overlap;
  if (!overlap_dp) {
    add_work(s, step, work, 1);
    return;
  }
  // Final backward of a chunk with overlapped gradient reduction (reduce-scatter with ZeRO 1): split
  // it into one piece per gradient bucket; each bucket's reduction starts when its piece is done (buckets
  // fill from the last layer to the first, as in PyTorch DDP and Megatron's overlapped reduction). Every
  // piece but the first runs beside the previous bucket's reduction and is slowed for as long as that
  // runs (the first may still overlap an earlier chunk's buckets; not counted).
  double grads = chunk_dense_params(w_, v_, s, step.chunk) * w_.training.grad_reduce_bytes;
  int buckets = bucket_count(chunk_dense_params(w_, v_, s, step.chunk), w_.training.grad_reduce_bytes);
  int bucket_plan = dp_plan(s, grads / buckets);
  double piece = work.seconds / buckets;
  for (int b = 0; b < buckets; ++b) {
    add_work(s, step, work, buckets, b == 0 ? piece : overlapped_seconds(piece, idle_seconds(bucket_plan)));
    int last = g_.streams[compute_stream_[s]].last_task;
    g_.add_comm(TaskKind::dp, dp_stream_[s], s, bucket_plan, Category::dp, {last});
  }
  if (moe_) add_expert_reduction(s, step.chunk, false, {g_.streams[compute_stream_[s]].last_task});
}

}  // namespace podsim::workload::megatron
