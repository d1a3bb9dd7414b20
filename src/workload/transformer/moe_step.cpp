// The MoE layers in the Megatron step: a chunk pass holds its dense and MoE layers (each kind folded as
// identical layers, as megatron_layers.cpp folds dense ones), the expert-parallel dispatch and combine
// after them as one serial communication task (or beside the shared experts with moe.overlap: dispatch,
// Megatron-Core's moe_shared_expert_overlap), and the routed experts' gradients reduced over their own
// expert data-parallel groups (Megatron-Core's expert_data_parallel group), apart from the dense buckets.
#include <fmt/format.h>

#include <algorithm>

#include "megatron_step_builder.hpp"
#include "podsim/network/collective.hpp"
#include "podsim/network/link_load.hpp"
#include "podsim/workload/transformer/data_parallel_groups.hpp"
#include "podsim/workload/transformer/moe_math.hpp"
#include "podsim/workload/transformer/moe_memory.hpp"

namespace podsim::workload::megatron {

using network::CollectiveKind;

// After the dispatcher's device-host sync the GPU runs only what the CPU has launched since, so the block
// takes at least the host time. Its kernels and its dispatch / combine (NCCL launches return at once; the
// CPU keeps launching while they move) hide that much of it.
double StepBuilder::host_stall(double host, double block_seconds, double dispatch_seconds) {
  return std::max(0.0, host - block_seconds - dispatch_seconds);
}

// DeepEP's and HybridEP's dispatch and combine are kernels that keep their SMs for as long as they move
// tokens (moe_flex_dispatcher_num_sms; NCCL's, one per channel, likewise), so the GEMMs and attention the
// schedule runs beside them have the other SMs: a compute-bound kernel runs sm / (sm - held) times longer.
// Memory-bound kernels lose less (the HBM is not held); counting them the same makes this an upper bound of
// the slowdown. Never less than the profile's slowdown for communication kernels in general.
double StepBuilder::ep_overlap_slowdown() const {
  int sm = topo_.device.sm_count, held = w_.moe.dispatcher_sms;
  if (held <= 0 || sm <= held) return 0;
  return std::max(topo_.device_profile.overlap_compute_slowdown, static_cast<double>(sm) / (sm - held));
}

long long StepBuilder::moe_layers_in_chunk(int stage, int chunk) const {
  return workload::moe_layers_in_chunk(w_, v_, stage, chunk);
}

std::vector<std::vector<int>> StepBuilder::expert_groups(int s, ExpertGroups which) const {
  return workload::expert_groups(w_.parallel, layout_, s, which);
}

const ExpertPhases& StepBuilder::ep_phases(int stage) {
  if (auto it = ep_phases_cache_.find(stage); it != ep_phases_cache_.end()) return it->second;
  return ep_phases_cache_.emplace(stage, expert_phases(topo_, w_, layout_, stage, moe_->traffic))
      .first->second;
}

// `which`: 0 dispatch then combine, 1 the dispatches alone, 2 the combines alone; `count` times each.
int StepBuilder::ep_phase_plan(int stage, double count, int which) {
  if (count <= 0) return -1;
  auto key = std::make_tuple(stage, count, which);
  if (auto it = ep_plan_cache_.find(key); it != ep_plan_cache_.end()) return it->second;
  const ExpertPhases& phases = ep_phases(stage);
  std::vector<plan::CommPlan> steps;
  if (which != 2) steps = phases.dispatch;
  if (which != 1) steps.insert(steps.end(), phases.combine.begin(), phases.combine.end());
  int id = -1;
  if (!steps.empty()) id = g_.add_plan(network::scaled(plan::CommPlan{network::serial_merge(steps)}, count));
  ep_plan_cache_.emplace(key, id);
  return id;
}

int StepBuilder::ep_plan(int stage, double layers, double pairs) {
  return ep_phase_plan(stage, layers * pairs, 0);  // -1 for no layers
}

int StepBuilder::ep_half_plan(int stage, double layers, bool dispatch) {
  return ep_phase_plan(stage, layers, dispatch ? 1 : 2);
}

StepBuilder::ChunkWork StepBuilder::moe_chunk_work(int stage, int chunk, Pass pass) {
  bool has_embedding = stage == 0 && chunk == 0;
  bool has_output = stage == p_ - 1 && chunk == v_ - 1;
  double moe_layers = static_cast<double>(moe_layers_in_chunk(stage, chunk));
  double dense_layers = chunk_layers(w_, v_, stage, chunk) - moe_layers;
  const LayerCosts& moe = moe_->layer;
  ChunkWork work;
  std::vector<TpCollective> dense_tp, moe_tp, extra;
  auto append = [&](const PassCost& c) { extra.insert(extra.end(), c.tp.begin(), c.tp.end()); };
  bool forward = pass == Pass::forward;
  double pairs = 1;
  double windowed = windowed_layers_in_chunk(stage, chunk);
  if (forward) {
    work.seconds =
        dense_layers * layer_.forward.seconds + moe_layers * moe.forward.seconds - windowed * window_.forward;
    if (dense_layers > 0) split_tp_overlap(stage, layer_.forward, dense_layers, dense_tp, work);
    if (moe_layers > 0) split_tp_overlap(stage, moe.forward, moe_layers, moe_tp, work);
    if (has_embedding) work.seconds += head_.embedding_forward.seconds, append(head_.embedding_forward);
    if (has_output) work.seconds += head_.output_forward.seconds, append(head_.output_forward);
  } else {
    work.seconds = dense_layers * (layer_.recompute.seconds + layer_.backward.seconds) +
                   moe_layers * (moe.recompute.seconds + moe.backward.seconds) - windowed * window_.backward;
    for (const PassCost* c : {&layer_.recompute, &layer_.backward})
      if (dense_layers > 0) split_tp_overlap(stage, *c, dense_layers, dense_tp, work);
    for (const PassCost* c : {&moe.recompute, &moe.backward})
      if (moe_layers > 0) split_tp_overlap(stage, *c, moe_layers, moe_tp, work);
    if (has_output) work.seconds += head_.output_backward.seconds, append(head_.output_backward);
    if (has_embedding) work.seconds += head_.embedding_backward.seconds, append(head_.embedding_backward);
    if (w_.training.recompute == Recompute::full) pairs = 2;  // the recomputed forward dispatches again
  }
  // Dense and MoE layers' TP collectives as one merged phase (tp_plan scales `extra` by nothing).
  int dense_plan = tp_plan(stage, dense_tp, dense_layers, extra);
  int moe_plan = moe_layers > 0 ? tp_plan(stage, moe_tp, moe_layers, {}) : -1;
  if (dense_plan >= 0 && moe_plan >= 0) {
    plan::CommPlan both = g_.plans[dense_plan];
    both.insert(both.end(), g_.plans[moe_plan].begin(), g_.plans[moe_plan].end());
    work.plan = g_.add_plan(std::move(both));
  } else {
    work.plan = dense_plan >= 0 ? dense_plan : moe_plan;
  }
  add_context_parallel(stage, pass, chunk_layers(w_, v_, stage, chunk), work);
  int ep = ep_plan(stage, moe_layers, pairs);
  double host = forward ? w_.moe.host_forward_s : w_.moe.host_backward_s;
  if (host > 0 && moe_layers > 0) {
    double dispatch = ep >= 0 ? network::idle_plan_time(topo_, g_.plans[ep]) / moe_layers : 0;
    double block = forward ? moe_->block_forward_seconds : moe_->block_backward_seconds;
    work.moe_host_stall = host_stall(host, block, dispatch);
    work.seconds += moe_layers * work.moe_host_stall;
  }
  double shared = moe_layers * (forward ? moe_->shared_forward_seconds : moe_->shared_backward_seconds);
  if (ep >= 0 && w_.moe.overlap == MoeOverlap::dispatch && shared > 0) {
    work.overlaps.push_back(
        {.seconds = shared, .plan = ep, .category = Category::ep, .slowdown = ep_overlap_slowdown()});
    work.seconds -= shared;
  } else {
    work.ep_plan = ep;
  }
  return work;
}

int StepBuilder::expert_dp_plan(int s, double bytes, CollectiveKind kind) {
  if (expert_data_parallel(w_.parallel) <= 1 || bytes <= 0) return -1;
  if (kind != CollectiveKind::all_gather && w_.parallel.zero == 0) kind = CollectiveKind::all_reduce;
  if (kind == CollectiveKind::all_gather && w_.parallel.zero == 0) return -1;
  std::vector<plan::CommPlan> plans;
  for (auto& g : expert_groups(s, ExpertGroups::expert_data))
    plans.push_back(
        network::plan_collective(topo_, data_parallel_collective(w_.parallel, kind, std::move(g), bytes)));
  return g_.add_plan(network::concurrent(plans));
}

void StepBuilder::add_expert_reduction(int s, int chunk_or_stage, bool whole_stage,
                                       const std::vector<int>& deps) {
  double layers = whole_stage ? static_cast<double>(stage_moe_layers(w_, s))
                              : static_cast<double>(moe_layers_in_chunk(s, chunk_or_stage));
  double bytes = layers * expert_params_per_layer(w_) * w_.training.grad_reduce_bytes;
  int plan = expert_dp_plan(s, bytes, CollectiveKind::reduce_scatter);
  if (plan >= 0) g_.add_comm(TaskKind::dp, dp_stream_[s], s, plan, Category::dp, deps);
}

std::string StepBuilder::moe_note() const {
  const auto& p = w_.parallel;
  const MoeTraffic& t = moe_->traffic;
  return fmt::format(
      "mixture of experts: {:.4g}B parameters, {:.4g}B active per token; {} of {} layers MoE, {} experts "
      "top-{}, ep {} x etp {} x expert data parallel {:.0f}; {} dispatcher, {:.3g} MB per rank per dispatch, "
      "busiest expert {:.0f} tokens (imbalance {:.3g}, {}){}{}; expert gradients reduced over the expert "
      "data-parallel group{}; not modelled: per-message costs beyond the fabric's step latency, the router's "
      "auxiliary loss",
      moe_total_params(w_) / 1e9, moe_active_params(w_) / 1e9, moe_layer_count(w_), w_.model.layers,
      w_.moe.experts, w_.moe.top_k, p.ep, p.etp, expert_data_parallel(p),
      w_.moe.dispatcher == MoeDispatcher::allgather ? "all-gather"
      : w_.moe.dispatcher == MoeDispatcher::flex
          ? "flex (DeepEP / HybridEP: a token once over RDMA to each other node holding one of its experts, "
            "and inside each node once over NVLink into each rank holding one, at the fabric profile's "
            "expert_dispatch rates)"
          : "all-to-all",
      t.dispatch_bytes / 1e6, t.busiest_expert_tokens, w_.moe.imbalance,
      w_.moe.dropless() ? std::string("dropless")
                        : fmt::format("capacity factor {:.3g}, {:.3g}% of token copies dropped",
                                      w_.moe.capacity_factor, 100 * dropped_fraction(w_.moe)),
      w_.moe.overlap == MoeOverlap::dispatch ? "; dispatch/combine beside the shared experts"
      : w_.moe.overlap == MoeOverlap::combined_1f1b
          ? "; combined 1F1B: each steady-state forward runs with the next backward, every all-to-all beside "
            "the other pass's compute (its host floor stays that of each pass alone; delay_wgrad_compute not "
            "modelled)"
          : "",
      w_.moe.overlap != MoeOverlap::none && ep_overlap_slowdown() > 0
          ? fmt::format("; the compute beside them runs on {} of the {} SMs ({} held by the dispatcher's "
                        "kernels, moe.dispatcher_sms: {:.2f}x longer while they run)",
                        topo_.device.sm_count - w_.moe.dispatcher_sms, topo_.device.sm_count,
                        w_.moe.dispatcher_sms, ep_overlap_slowdown())
          : "",
      w_.moe.host_forward_s + w_.moe.host_backward_s > 0
          ? fmt::format(
                "; a MoE block's pass lasts at least its host launch time ({:.0f} us forward, {:.0f} us "
                "backward: the dispatcher's device-host sync keeps the GPU from running ahead)",
                w_.moe.host_forward_s * 1e6, w_.moe.host_backward_s * 1e6)
          : "");
}

}  // namespace podsim::workload::megatron
