// After the pipeline of the Megatron step: data-parallel gradient reduction (whole or per bucket), the
// tied embedding's gradient all-reduce, the model-parallel sync before the optimizer, the optimizer step
// and, with a sharded optimizer, the gather of the updated parameters.
#include "megatron_step_builder.hpp"
#include "podsim/network/collective.hpp"
#include "podsim/workload/transformer/memory_model.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"

namespace podsim::workload::megatron {

using network::Collective;
using network::CollectiveKind;

double StepBuilder::chunk_params(int s, int chunk) const {
  double params = layers_per_chunk_ * layer_params(w_.model) / layout_.tp;
  double stage_extra = stage_params(w_, s) - (w_.model.layers / p_) * layer_params(w_.model) / layout_.tp;
  if ((s == 0 && chunk == 0) || (s == p_ - 1 && chunk == v_ - 1)) params += stage_extra;
  return params;
}

// Context-parallel ranks hold the same weights as data-parallel ones: gradients are reduced (and the
// distributed optimizer sharded) over the dp x cp ranks, ParallelLayout::grad_group, as in Megatron-Core.
int StepBuilder::dp_plan(int s, double bytes) {
  if (layout_.dp * layout_.cp == 1) return -1;
  std::vector<plan::CommPlan> plans;
  CollectiveKind kind = w_.parallel.zero >= 1 ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce;
  for (int r : rail_ranks_) {
    Collective c = network::make_collective(kind, layout_.grad_group(r, s), bytes);
    c.algorithm = network::parse_algorithm(w_.parallel.dp_algorithm);
    plans.push_back(network::plan_collective(topo_, c));
  }
  return g_.add_plan(network::concurrent(plans));
}

void StepBuilder::build_gradient_sync_and_optimizer() {
  std::vector<int> grads_ready = reduce_gradients();
  std::vector<int> before_optimizer = grads_ready;
  if (p_ > 1) before_optimizer[0] = before_optimizer[p_ - 1] = sync_embeddings(grads_ready);
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
// reductions are done (whole-stage reduction here when it does not overlap the backward).
std::vector<int> StepBuilder::reduce_gradients() {
  std::vector<int> grads_ready(p_);
  for (int s = 0; s < p_; ++s) {
    if (layout_.dp * layout_.cp > 1 && !w_.parallel.dp_overlap) {
      double grads = stage_params(w_, s) * w_.training.grad_reduce_bytes;
      g_.add_comm(TaskKind::dp, dp_stream_[s], s, dp_plan(s, grads), Category::dp, {flush_done_[s]});
    }
    grads_ready[s] = g_.add_comm(TaskKind::call_done, dp_stream_[s], s, -1, Category::tp, {flush_done_[s]});
  }
  return grads_ready;
}

// Tied word embeddings: the first and the last stage all-reduce their embedding gradients.
int StepBuilder::sync_embeddings(const std::vector<int>& grads_ready) {
  std::vector<plan::CommPlan> plans;
  double bytes =
      static_cast<double>(w_.model.vocab) * w_.model.hidden / layout_.tp * w_.training.grad_reduce_bytes;
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

void StepBuilder::add_optimizer_steps(int sync_id) {
  for (int s = 0; s < p_; ++s) {
    int grad_ranks = layout_.dp * layout_.cp;
    double params = stage_params(w_, s) / (w_.parallel.zero >= 1 ? grad_ranks : 1);
    int opt_id = g_.add_compute(TaskKind::optimizer, compute_stream_[s], s,
                                optimizer_cost(params, *cm_).seconds, Category::optimizer, {sync_id});
    if (w_.parallel.zero >= 1 && grad_ranks > 1) {  // sharded optimizer: gather the updated parameters
      std::vector<plan::CommPlan> plans;
      double bytes = stage_params(w_, s) * element_bytes(w_.training.precision);
      for (int r : rail_ranks_)
        plans.push_back(network::plan_collective(
            topo_, network::make_collective(CollectiveKind::all_gather, layout_.grad_group(r, s), bytes)));
      g_.add_comm(TaskKind::dp, dp_stream_[s], s, g_.add_plan(network::concurrent(plans)), Category::dp,
                  {opt_id});
    }
  }
}

}  // namespace podsim::workload::megatron
