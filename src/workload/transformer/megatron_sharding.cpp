// Data-parallel sharding beyond the gradient reduction: ZeRO-3 / FSDP's per-unit parameter gathers and
// gradient reduce-scatters, ZeRO-2's reduce-scatter in every backward, the distributed optimizer's parameter
// all-gather overlapped with the first forward (Megatron's overlap_param_gather), and the slowdown of compute
// that communication kernels overlap (they take SMs and HBM bandwidth).
#include <algorithm>

#include "megatron_step_builder.hpp"
#include "podsim/network/link_load.hpp"
#include "podsim/workload/transformer/gradient_buckets.hpp"
#include "podsim/workload/transformer/moe_memory.hpp"
#include "podsim/workload/transformer/precision_bytes.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"

namespace podsim::workload::megatron {

using network::CollectiveKind;

std::vector<int> StepBuilder::after_compute(int s) const {
  int last = g_.streams[compute_stream_[s]].last_task;
  return last >= 0 ? std::vector<int>{last} : std::vector<int>{};
}

double StepBuilder::idle_seconds(int plan) {
  if (plan < 0) return 0;
  auto it = idle_time_cache_.find(plan);
  if (it != idle_time_cache_.end()) return it->second;
  double t = network::idle_plan_time(topo_, g_.plans[plan]);
  idle_time_cache_[plan] = t;
  return t;
}

// While communication runs, compute progresses at 1/slowdown of its rate: `comm` seconds of overlap do
// comm/slowdown of the work, the rest runs at full speed; if the communication outlasts the compute, all
// of it is slowed. `comm` is the idle-network time, so contention that lengthens the communication is
// not counted here (the engine does lengthen the communication itself).
double StepBuilder::overlapped_seconds(double compute, double comm, double slowdown) const {
  if (slowdown <= 0) slowdown = topo_.device_profile.overlap_compute_slowdown;
  if (slowdown <= 1 || comm <= 0 || compute <= 0) return compute;
  if (comm >= compute * slowdown) return compute * slowdown;
  return compute + comm * (1 - 1 / slowdown);
}

// ZeRO-3 / FSDP (per chunk pass, so with pipelines too): every unit (a transformer layer; the embedding, the
// final norm and the tied output layer form their own unit; a MoE layer's routed experts gathered and reduced
// in the expert data-parallel group) is all-gathered in the shard group before its
// forward and again before its backward, and its gradients are reduce-scattered (then, with HSDP,
// all-reduced across groups) after its backward. The next unit's gather is prefetched on its own stream.
// This happens for every microbatch: with gradient accumulation FSDP re-gathers in every forward and
// backward (torchtitan / FSDP2's reshard_after_forward, NeMo's Megatron-FSDP alike) and reduce-scatters
// every backward, because the gradients are sharded and an unsharded accumulation buffer is what ZeRO-3
// avoids.
//
// Folded like chunk_work folds layers: a pass over L layers is the first unit's gather (exposed), then
// one compute task beside one gather of the other L-1 layers (and, backward, one reduce-scatter of L-1
// layers' gradients); a zero-time marker makes the next pass wait for the gathers, and the last unit's
// reduce-scatter follows the compute. With identical layers this equals the per-layer pipeline
// first_gather + max(L compute, (L-1) gather) except for the last layer's compute when gathers dominate
// (per layer: L gather + compute); the L-1 reduce-scatters start with the compute instead of one layer
// later (slightly optimistic). dp_overlap: false gathers the whole pass before its compute (no prefetch).
// reshard_after_forward: false (FSDP1's SHARD_GRAD_OP) keeps the forward's gathers for the backward, which
// then only reduce-scatters, its first L-1 units' beside the compute, the last unit's after it.
StepBuilder::FsdpUnits StepBuilder::fsdp_units(int s, int chunk) const {
  FsdpUnits u;
  u.layers = chunk_layers(w_, v_, s, chunk);
  u.heads = chunk_head_params(w_, v_, s, chunk);
  u.unit = (chunk_dense_params(w_, v_, s, chunk) - u.heads) / u.layers;  // a layer's dense parameters (mean)
  // MoE layers' routed experts are sharded over the expert data-parallel group, gathered and reduced
  // there per MoE layer, beside the dense units (moe_memory.hpp).
  u.moe_layers = moe_ ? static_cast<double>(moe_layers_in_chunk(s, chunk)) : 0;
  u.expert_unit = u.moe_layers > 0 ? expert_params_per_layer(w_) : 0;
  return u;
}

void StepBuilder::add_fsdp_pass(int s, const StageStep& step) {
  ChunkWork work = chunk_work(s, step.chunk, step.pass);
  bool backward = step.pass == Pass::backward;
  bool gathers = !backward || w_.parallel.reshard_after_forward;
  // Gathered in the parameters' 16-bit copy under the fp8 formats too (no fp8 parameter gather modelled).
  double eb = workload::activation_bytes(w_.training), gb = w_.training.grad_reduce_bytes;
  auto [L, unit, heads, M, expert_unit] = fsdp_units(s, step.chunk);
  bool prefetch = w_.parallel.dp_overlap && L > 1;
  double first_params = (prefetch ? unit : L * unit) + heads;
  double first_experts = (prefetch ? std::min(1.0, M) : M) * expert_unit;
  // What the pass's compute and the overlapped reduce-scatters start after: the first unit's gather, or
  // the stage's previous compute when the backward keeps the forward's gathers.
  std::vector<int> start = after_compute(s);
  int first = -1;
  if (gathers) {
    first = g_.add_comm(TaskKind::dp, gather_stream_[s], s, param_gather_plan(s, first_params * eb),
                        Category::dp, start);
    int first_expert_plan = expert_dp_plan(s, first_experts * eb, CollectiveKind::all_gather);
    if (first_expert_plan >= 0)
      first = g_.add_comm(TaskKind::dp, gather_stream_[s], s, first_expert_plan, Category::dp, {first});
    start = {first};
  }
  std::vector<int> rest_plans, scatter_plans;
  int rest = -1;
  if (prefetch) {
    double rest_experts = (M - std::min(1.0, M)) * expert_unit;
    if (gathers) {
      rest_plans = {param_gather_plan(s, (L - 1) * unit * eb),
                    expert_dp_plan(s, rest_experts * eb, CollectiveKind::all_gather)};
      for (int plan : rest_plans)
        if (plan >= 0) rest = g_.add_comm(TaskKind::dp, gather_stream_[s], s, plan, Category::dp, {first});
    }
    if (backward) {
      scatter_plans = {dp_plan(s, (L - 1) * unit * gb),
                       expert_dp_plan(s, rest_experts * gb, CollectiveKind::reduce_scatter)};
      for (int plan : scatter_plans)
        if (plan >= 0) g_.add_comm(TaskKind::dp, dp_stream_[s], s, plan, Category::dp, start);
    }
  }
  // Gathers and reduce-scatters beside the compute each hold SMs; their idle times add up.
  double comm = 0;
  for (int plan : rest_plans) comm += idle_seconds(plan);
  for (int plan : scatter_plans) comm += idle_seconds(plan);
  // The pass's own overlapped communication (context parallelism, tp_overlap) rides along in add_work.
  add_work(s, step, work, 1, overlapped_seconds(work.seconds, comm), gathers ? start : std::vector<int>{});
  int compute = g_.streams[compute_stream_[s]].last_task;
  if (backward) {
    g_.add_comm(TaskKind::dp, dp_stream_[s], s, dp_plan(s, first_params * gb), Category::dp, {compute});
    int expert_scatter = expert_dp_plan(s, first_experts * gb, CollectiveKind::reduce_scatter);
    if (expert_scatter >= 0)
      g_.add_comm(TaskKind::dp, dp_stream_[s], s, expert_scatter, Category::dp, {compute});
  }
  if (rest >= 0)
    g_.add_task({.kind = TaskKind::call_done, .stream = compute_stream_[s], .stage = s, .deps = {rest}});
}

// ZeRO-2 keeps only its shard of the gradients, so every backward reduce-scatters what it produced
// (Megatron-FSDP's optim_grads: "for grads shard mode there will actually always be gradient sync";
// DeepSpeed ZeRO-2 alike), where ZeRO 0/1 accumulate whole gradients and reduce them once, in the last
// backward. With dp_overlap, folded as the ZeRO-3 pass is (it happens every microbatch, so per-bucket
// pieces would multiply the tasks): all buckets but the last reduce beside the compute, which they slow,
// the last after it (a bucket's reduction starting with the compute rather than when it fills: slightly
// optimistic). Without overlap the whole reduce-scatter follows the backward and the stage waits for it.
void StepBuilder::add_zero2_backward(int s, const StageStep& step, const ChunkWork& work) {
  double params = chunk_dense_params(w_, v_, s, step.chunk), grads = params * w_.training.grad_reduce_bytes;
  int buckets = w_.parallel.dp_overlap ? bucket_count(params, w_.training.grad_reduce_bytes) : 1;
  int rest_plan = buckets > 1 ? dp_plan(s, grads * (buckets - 1) / buckets) : -1;
  if (rest_plan >= 0) g_.add_comm(TaskKind::dp, dp_stream_[s], s, rest_plan, Category::dp, after_compute(s));
  add_work(s, step, work, 1, overlapped_seconds(work.seconds, idle_seconds(rest_plan)));
  int compute = g_.streams[compute_stream_[s]].last_task;
  g_.add_comm(TaskKind::dp, dp_stream_[s], s, dp_plan(s, grads / buckets), Category::dp, {compute});
  if (moe_) add_expert_reduction(s, step.chunk, false, {compute});
  if (!w_.parallel.dp_overlap)
    g_.add_task({.kind = TaskKind::call_done,
                 .stream = compute_stream_[s],
                 .stage = s,
                 .deps = {g_.streams[dp_stream_[s]].last_task}});
}

bool StepBuilder::overlaps_param_gather(const StageStep& step) const {
  return step.pass == Pass::forward && step.microbatch == 0 && w_.parallel.zero >= 1 &&
         w_.parallel.zero < 3 && grad_ranks() > 1 && w_.parallel.dp_overlap;
}

// ZeRO 1/2 with dp_overlap (Megatron's overlap_param_gather): the all-gather of the parameters the last
// optimizer step updated is dispatched in buckets at the start of the step, and each bucket's part of the
// chunk's first forward waits for it. One step is simulated, so the gather of the previous step's update
// stands in for this step's (same bytes, steady state) and the step ends with the optimizer. Every piece
// but the last runs beside the next bucket's gather and is slowed for as long as that runs.
void StepBuilder::add_gathered_forward(int s, const StageStep& step) {
  ChunkWork work = chunk_work(s, step.chunk, step.pass);
  double bytes = chunk_dense_params(w_, v_, s, step.chunk) * workload::activation_bytes(w_.training);
  int buckets =
      bucket_count(chunk_dense_params(w_, v_, s, step.chunk), workload::activation_bytes(w_.training));
  int gather_plan = param_gather_plan(s, bytes / buckets);
  double piece = work.seconds / buckets;
  std::vector<int> gathers;
  for (int b = 0; b < buckets; ++b)
    gathers.push_back(g_.add_comm(TaskKind::dp, gather_stream_[s], s, gather_plan, Category::dp));
  for (int b = 0; b < buckets; ++b)
    add_work(s, step, work, buckets,
             b + 1 < buckets ? overlapped_seconds(piece, idle_seconds(gather_plan)) : piece, {gathers[b]});
}

}  // namespace podsim::workload::megatron
