// After the pipeline of the Megatron step: data-parallel gradient reduction (whole or per bucket), the
// tied embedding's gradient all-reduce, the model-parallel sync before the optimizer, the optimizer step
// and, with a sharded optimizer, the gather of the updated parameters. Every data-parallel group comes
// from grad_group(); HSDP (parallel.shard_group) splits it into shard groups and replica groups.
#include "megatron_step_builder.hpp"
#include "podsim/workload/transformer/data_parallel_groups.hpp"
#include "podsim/workload/transformer/memory_model.hpp"
#include "podsim/workload/transformer/moe_memory.hpp"
#include "podsim/workload/transformer/optimizer_step.hpp"
#include "podsim/workload/transformer/precision_bytes.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"

namespace podsim::workload::megatron {

using network::Collective;
using network::CollectiveKind;

// The one place that says which ranks reduce gradients (and share ZeRO shards) with TP rank `tp_rank` of
// stage `s`. Context-parallel ranks hold the same weights as data-parallel ones: gradients are reduced
// (and the distributed optimizer sharded) over the dp x cp ranks, as in Megatron-Core.
std::vector<int> StepBuilder::grad_group(int tp_rank, int s) const {
  return layout_.grad_group(tp_rank, s);
}

int StepBuilder::shard_size() const {
  return layout_.shard_ranks();
}

plan::CommPlan StepBuilder::shard_collective(int s, CollectiveKind kind, double bytes) const {
  return data_parallel_plan(topo_, w_.parallel, layout_, rail_ranks_, s, DataParallelGroups::shard, kind,
                            bytes);
}

plan::CommPlan StepBuilder::replica_all_reduce(int s, double bytes) const {
  return data_parallel_plan(topo_, w_.parallel, layout_, rail_ranks_, s, DataParallelGroups::replica,
                            CollectiveKind::all_reduce, bytes);
}

int StepBuilder::dp_plan(int s, double bytes) {
  if (grad_ranks() == 1) return -1;
  if (w_.parallel.zero == 0) return g_.add_plan(shard_collective(s, CollectiveKind::all_reduce, bytes));
  // Reduce-scatter inside the shard group; with HSDP each rank's shard is then all-reduced with the
  // ranks holding the same shard in the other groups (two phases of one task).
  plan::CommPlan plan = shard_collective(s, CollectiveKind::reduce_scatter, bytes);
  plan::CommPlan across = replica_all_reduce(s, bytes / shard_size());
  plan.insert(plan.end(), across.begin(), across.end());
  return g_.add_plan(std::move(plan));
}

int StepBuilder::param_gather_plan(int s, double bytes) {
  if (grad_ranks() == 1 || shard_size() == 1) return -1;
  return g_.add_plan(shard_collective(s, CollectiveKind::all_gather, bytes));
}

void StepBuilder::build_gradient_sync_and_optimizer() {
  std::vector<int> grads_ready = reduce_gradients();
  std::vector<int> before_optimizer = grads_ready;
  // Megatron-Core all-reduces the word embedding's gradient between the first and the last stage only
  // where both hold it: tied to the output layer, or used by the MTP layers on the last stage
  // (finalize_model_grads.py _get_shared_word_embedding_weight).
  bool shared_embedding = w_.model.tied_embeddings || w_.model.mtp_layers > 0;
  if (p_ > 1 && shared_embedding)
    before_optimizer[0] = before_optimizer[p_ - 1] = sync_embeddings(grads_ready);
  // Gradient clipping and the fp16 overflow check all-reduce small values over the model-parallel
  // group, which makes every stage wait for the slowest before its optimizer step.
  std::vector<int> stage_reps;
  for (int s = 0; s < p_; ++s)
    for (int t = 0; t < layout_.tp; ++t) stage_reps.push_back(layout_.device(t, 0, 0, s));
  int sync_plan = g_.add_plan(
      network::plan_collective(topo_, network::make_collective(CollectiveKind::all_reduce, stage_reps, 8)));
  int sync_id = g_.add_comm(TaskKind::sync, -1, -1, sync_plan, Category::optimizer, before_optimizer);
  add_optimizer_steps(sync_id);
}

// Per stage, the task after which its gradients are complete: the pipeline is flushed and the stage's
// reductions are done (whole-stage reduction here when it does not overlap the backward; ZeRO-2 reduces
// in every backward, megatron_layers.cpp, ZeRO-3 per unit in every backward, megatron_sharding.cpp). The
// marker is on the data-parallel stream, so it also waits for every reduction queued there.
std::vector<int> StepBuilder::reduce_gradients() {
  std::vector<int> grads_ready(p_);
  for (int s = 0; s < p_; ++s) {
    // ZeRO 2 and 3 reduce-scatter in every backward (megatron_layers.cpp, megatron_sharding.cpp).
    if (grad_ranks() > 1 && !w_.parallel.dp_overlap && w_.parallel.zero < 2) {
      double grads = (stage_params(w_, s) - expert_stage_params(w_, s)) * w_.training.grad_reduce_bytes;
      g_.add_comm(TaskKind::dp, dp_stream_[s], s, dp_plan(s, grads), Category::dp, {flush_done_[s]});
    }
    if (moe_ && !w_.parallel.dp_overlap && w_.parallel.zero < 2)
      add_expert_reduction(s, s, true, {flush_done_[s]});
    grads_ready[s] = g_.add_comm(TaskKind::call_done, dp_stream_[s], s, -1, Category::tp, {flush_done_[s]});
  }
  return grads_ready;
}

// A shared word embedding (tied, or MTP): the first and the last stage all-reduce its gradients.
int StepBuilder::sync_embeddings(const std::vector<int>& grads_ready) {
  std::vector<plan::CommPlan> plans;
  // With the gradients sharded (ZeRO-2/3, Megatron-FSDP), each rank all-reduces its local shard (the
  // same function takes the DTensor's _local_tensor); otherwise the whole gradient.
  double shard = w_.parallel.zero >= 2 ? shard_size() : 1;
  double bytes = static_cast<double>(w_.model.vocab) * w_.model.hidden / layout_.tp *
                 w_.training.grad_reduce_bytes / shard;
  for (int replica = 0; replica < layout_.dp; ++replica)
    for (int c = 0; c < layout_.cp; ++c)
      for (int r : rail_ranks_)
        plans.push_back(network::plan_collective(
            topo_, network::make_collective(
                       CollectiveKind::all_reduce,
                       {layout_.device(r, c, replica, 0), layout_.device(r, c, replica, p_ - 1)}, bytes)));
  return g_.add_task({.kind = TaskKind::embedding_sync,
                      .stage = 0,
                      .peer_stage = p_ - 1,
                      .deps = {grads_ready[0], grads_ready[p_ - 1]},
                      .plan = g_.add_plan(network::concurrent(plans)),
                      .comm_category = Category::dp});
}

// The optimizer updates the rank's shard (1/shard group of the stage with ZeRO). ZeRO 1/2 then all-gather
// the updated parameters: here, after the step, without overlap; with dp_overlap the gather is Megatron's
// overlap_param_gather, run under the next step's first forward (megatron_sharding.cpp). ZeRO-3 keeps the
// parameters sharded and gathers them per unit before use.
void StepBuilder::add_optimizer_steps(int sync_id) {
  for (int s = 0; s < p_; ++s) {
    double experts = expert_stage_params(w_, s);
    int opt_id = g_.add_compute(TaskKind::optimizer, compute_stream_[s], s,
                                optimizer_step_seconds(w_, s, *cm_), Category::optimizer, {sync_id});
    if (!gathers_after_optimizer()) continue;
    // Parameters are gathered in their 16-bit copy (the fp8 copy is made per GEMM, precision_bytes.hpp).
    double bytes = (stage_params(w_, s) - experts) * workload::activation_bytes(w_.training);
    int plan = param_gather_plan(s, bytes);
    if (plan >= 0) g_.add_comm(TaskKind::dp, dp_stream_[s], s, plan, Category::dp, {opt_id});
    int expert_plan =
        expert_dp_plan(s, experts * workload::activation_bytes(w_.training), CollectiveKind::all_gather);
    if (expert_plan >= 0) g_.add_comm(TaskKind::dp, dp_stream_[s], s, expert_plan, Category::dp, {opt_id});
  }
}

bool StepBuilder::gathers_after_optimizer() const {
  return w_.parallel.zero >= 1 && w_.parallel.zero < 3 && grad_ranks() > 1 && !w_.parallel.dp_overlap;
}

}  // namespace podsim::workload::megatron
