// Estimator::refine (plan_bound.hpp): the whole step's expert dispatches and data-parallel collectives,
// every group of every stage, on the busiest link, asked for only by the candidates about to be simulated.
#include <optional>
#include <tuple>

#include "plan_bound_parts.hpp"
#include "podsim/network/link_load.hpp"
#include "podsim/workload/parallel_layout.hpp"
#include "podsim/workload/transformer/expert_phases.hpp"
#include "podsim/workload/transformer/megatron_builder.hpp"
#include "podsim/workload/transformer/moe_math.hpp"
#include "podsim/workload/transformer/precision_bytes.hpp"

namespace podsim::driver {

using workload::WorkloadConfig;

namespace {

// A layout's identity for the caches of whole-stage plans.
std::vector<int> layout_key(const workload::ParallelConfig& p) {
  return {
      p.tp, p.cp, p.dp, p.pp, p.ep, p.etp, static_cast<int>(p.rank_order), p.zero > 0 ? p.shard_group : 0};
}

}  // namespace

int Estimator::stage_ep_links(const WorkloadConfig& w, int stage, const workload::MoeTraffic& t) {
  const auto& p = w.parallel;
  auto key = std::make_tuple(layout_key(p), stage, 3, static_cast<int>(w.moe.dispatcher), t.dispatch_bytes,
                             t.etp_bytes, t.flex_to_each_remote_peer, t.flex_to_each_local_peer);
  if (auto it = stage_links_.find(key); it != stage_links_.end()) return it->second;
  // Every dispatch and combine of the stage's groups, as the step builder runs them; the order does not
  // matter here, only each link's total bytes.
  auto phases = workload::expert_phases(topo_, w, workload::rank_layout(p), stage, t);
  plan::CommPlan all;
  for (const auto* half : {&phases.dispatch, &phases.combine})
    for (const auto& plan : *half) all.insert(all.end(), plan.begin(), plan.end());
  int id = profile(network::idle_link_seconds(topo_, all));
  stage_links_.emplace(std::move(key), id);
  return id;
}

int Estimator::stage_dp_links(const WorkloadConfig& w, int stage, int which, network::CollectiveKind kind,
                              double bytes) {
  const auto& p = w.parallel;
  auto key = std::make_tuple(layout_key(p), stage, which, static_cast<int>(kind), bytes, 0.0, 0.0, 0.0);
  if (auto it = stage_links_.find(key); it != stage_links_.end()) return it->second;
  const auto layout = workload::rank_layout(p);
  plan::CommPlan all;
  auto add = [&](const std::vector<int>& group, network::CollectiveKind k) {
    if (group.size() < 2) return;
    auto plan = network::plan_collective(topo_, workload::data_parallel_collective(p, k, group, bytes));
    all.insert(all.end(), plan.begin(), plan.end());
  };
  if (which == 2) {  // StepBuilder::expert_dp_plan: every (etp, ep) rank's group
    for (const auto& g : workload::expert_groups(p, layout, stage, workload::ExpertGroups::expert_data))
      add(g, kind);
  } else {  // StepBuilder::shard_collective / replica_all_reduce: the simulated tp ranks' groups
    auto groups = which == 0 ? workload::DataParallelGroups::shard : workload::DataParallelGroups::replica;
    auto k = which == 0 ? kind : network::CollectiveKind::all_reduce;
    for (const auto& g :
         workload::data_parallel_groups(layout, workload::simulated_tp_ranks(topo_, layout), stage, groups))
      add(g, k);
  }
  int id = profile(network::idle_link_seconds(topo_, all));
  stage_links_.emplace(std::move(key), id);
  return id;
}

// The whole step's expert dispatches and data-parallel collectives, every group of every stage, as the
// builder runs them (the same counts link_load gives one rank's groups; HSDP's replica all-reduce after
// each reduce-scatter of the shard); the busiest link direction's seconds, which no schedule beats. All of
// it precedes the model-parallel sync (the parameter all-gather after ZeRO 1/2's optimizer is left out), so
// the slowest stage's optimizer step follows it.
void Estimator::refine(const WorkloadConfig& given, CandidateEstimate& e) {
  WorkloadConfig w = given;
  w.parallel.tp_overlap = workload::tp_overlap_in_effect(w.parallel, topo_.device);
  using network::CollectiveKind;
  const auto& p = w.parallel;
  if (!e.fits) return;
  double m = microbatches(w), eb = workload::activation_bytes(w.training), gb = w.training.grad_reduce_bytes;
  double unit = dense_unit_params(w), expert_unit = workload::expert_params_per_layer(w);
  std::optional<workload::MoeTraffic> traffic;
  if (w.moe.enabled() && p.ep * p.etp > 1)
    traffic = workload::moe_layer_costs(w, w.training.micro_batch, compute_model(w),
                                        workload::layer_costs(w, w.training.micro_batch, compute_model(w)))
                  .traffic;
  double pairs = 1 + (w.training.recompute == workload::Recompute::full ? 2 : 1);
  bool data_parallel = static_cast<long long>(p.dp) * p.cp > 1;
  int shard = p.zero > 0 && p.shard_group > 0 ? p.shard_group * p.cp : p.dp * p.cp;
  std::vector<std::pair<int, double>> parts;
  for (int s = 0; s < p.pp; ++s) {
    const StageLayers layers = stage_layers_of(w, s);
    if (traffic && layers.moe > 0) parts.emplace_back(stage_ep_links(w, s, *traffic), m * layers.moe * pairs);
    if (!data_parallel) continue;
    double dense = layers.layers * unit, experts = layers.moe * expert_unit;
    auto add = [&](int which, CollectiveKind kind, double bytes, double times) {
      if (bytes > 0 && times > 0) parts.emplace_back(stage_dp_links(w, s, which, kind, bytes), times);
    };
    auto reduce = [&](double times) {
      auto kind = p.zero == 0 ? CollectiveKind::all_reduce : CollectiveKind::reduce_scatter;
      add(0, kind, dense * gb, times);
      if (p.zero > 0) add(1, CollectiveKind::all_reduce, dense * gb / shard, times);
      add(2, kind, experts * gb, times);
    };
    if (p.zero < 3) {
      reduce(p.zero == 2 ? m : 1);
    } else {
      double gathering_passes = p.reshard_after_forward ? 2 * m : m;
      add(0, CollectiveKind::all_gather, dense * eb, gathering_passes);
      add(2, CollectiveKind::all_gather, experts * eb, gathering_passes);
      reduce(m);
    }
  }
  e.fabric_load = kCommMargin * busiest_link(parts);
  e.lower_bound = std::max(e.lower_bound, e.fabric_load + e.optimizer);
}

}  // namespace podsim::driver
