// Closed-form memory and lower bound of a plan candidate (plan_bound.hpp).
#include "podsim/driver/plan_bound.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "plan_bound_parts.hpp"
#include "podsim/network/collective.hpp"
#include "podsim/network/expert_dispatch.hpp"
#include "podsim/network/link_load.hpp"
#include "podsim/workload/parallel_layout.hpp"
#include "podsim/workload/pipeline_assembly.hpp"
#include "podsim/workload/pipeline_schedule.hpp"
#include "podsim/workload/transformer/context_parallel.hpp"
#include "podsim/workload/transformer/gradient_buckets.hpp"
#include "podsim/workload/transformer/layer_ops.hpp"
#include "podsim/workload/transformer/megatron_builder.hpp"
#include "podsim/workload/transformer/memory_model.hpp"
#include "podsim/workload/transformer/moe_math.hpp"
#include "podsim/workload/transformer/moe_memory.hpp"
#include "podsim/workload/transformer/optimizer_step.hpp"
#include "podsim/workload/transformer/pipeline_split.hpp"
#include "podsim/workload/transformer/pipeline_transfer.hpp"
#include "podsim/workload/transformer/precision_bytes.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"

namespace podsim::driver {

using workload::PassCost;
using workload::Schedule;
using workload::WorkloadConfig;

// The rates the step builder gives its compute model (StepBuilder::describe).
const calibration::ComputeModel& Estimator::compute_model(const WorkloadConfig& w) {
  // Memoized: the candidates' layers time the same few hundred GEMM shapes again and again.
  if (!cm_)
    cm_ = calibration::ComputeModel(
              calibration::with_attention_library(topo_.device_profile, w.training.attention_library),
              workload::device_rates(topo_.device, w.training.precision))
              .with_gemm_memo();
  return *cm_;
}

namespace {
// The schedule the step builder runs (none without a pipeline) and whether it is combined 1F1B (the builder
// refuses that pipelined without chunks).
std::pair<Schedule, bool> builder_schedule(const WorkloadConfig& w) {
  const auto& p = w.parallel;
  Schedule schedule = p.pp == 1 ? Schedule::none : p.schedule;
  bool combined = w.moe.enabled() && w.moe.overlap == workload::MoeOverlap::combined_1f1b &&
                  (p.pp == 1 || (schedule == Schedule::interleaved && p.virtual_stages > 1));
  return {schedule, combined};
}
}  // namespace

double Estimator::memory(const WorkloadConfig& w) {
  int p = w.parallel.pp, m = microbatches(w), v = w.parallel.virtual_stages;
  // Combined 1F1B holds one more forward in flight.
  auto [schedule, combined] = builder_schedule(w);
  int group = w.parallel.microbatch_group;
  auto key = std::make_tuple(static_cast<int>(schedule), p, m, v, combined, group);
  auto it = peaks_.find(key);
  if (it == peaks_.end())
    it = peaks_
             .emplace(key, workload::peak_in_flight(
                               workload::build_schedule(schedule, p, m, v, combined, {}, group)))
             .first;
  double peak = 0;
  for (const auto& stage :
       workload::stage_memory(w, w.training.micro_batch, v, it->second, topo_.device_profile))
    peak = std::max(peak, stage.total());
  return peak;
}

// Idle-network time of one shard group's collective. The builder runs every group's collective at once
// (and, with HSDP, an all-reduce across groups after a reduce-scatter), which only adds flows to the same
// links: one group alone is never slower.
double Estimator::dp_seconds(const WorkloadConfig& w, const RankGroups& g, network::CollectiveKind kind,
                             double bytes) {
  return group_seconds(w.parallel, g.shard_id, kind, bytes);
}

int Estimator::intern(std::vector<int> group) {
  auto [it, added] = group_ids_.try_emplace(std::move(group), static_cast<int>(groups_.size()));
  if (added) groups_.push_back(it->first);
  return it->second;
}

namespace {
// The cache key of a data-parallel collective of an interned group (data_parallel_collective's algorithm).
std::tuple<int, int, int, double> collective_key(const workload::ParallelConfig& p, int group,
                                                 network::CollectiveKind kind, double bytes) {
  int algorithm = kind == network::CollectiveKind::all_gather
                      ? -1
                      : static_cast<int>(network::parse_algorithm(p.dp_algorithm));
  return {group, static_cast<int>(kind), algorithm, bytes};
}
}  // namespace

// A data-parallel collective's idle-network time in an interned group, cached: the bound asks for the
// same few groups and sizes again and again across the candidates.
double Estimator::group_seconds(const workload::ParallelConfig& p, int group, network::CollectiveKind kind,
                                double bytes) {
  const auto& ranks = groups_[static_cast<size_t>(group)];
  if (ranks.size() <= 1 || bytes <= 0) return 0;
  auto key = collective_key(p, group, kind, bytes);
  if (auto it = group_seconds_.find(key); it != group_seconds_.end()) return it->second;
  double t = network::idle_plan_time(
      topo_, network::plan_collective(topo_, workload::data_parallel_collective(p, kind, ranks, bytes)));
  group_seconds_.emplace(key, t);
  return t;
}

// Its seconds per link direction (network::idle_link_seconds), cached likewise; a profile id.
int Estimator::group_links(const workload::ParallelConfig& p, int group, network::CollectiveKind kind,
                           double bytes) {
  auto key = collective_key(p, group, kind, bytes);
  if (auto it = group_links_.find(key); it != group_links_.end()) return it->second;
  const auto& ranks = groups_[static_cast<size_t>(group)];
  int id = profile(network::idle_link_seconds(
      topo_, network::plan_collective(topo_, workload::data_parallel_collective(p, kind, ranks, bytes))));
  group_links_.emplace(key, id);
  return id;
}

int Estimator::profile(network::LinkSeconds links) {
  profiles_.push_back(std::move(links));
  return static_cast<int>(profiles_.size()) - 1;
}

// What one stage's rank sends over its busiest link in a step, whatever the schedule: the dispatch and
// combine of each of its MoE layers' passes in its expert-parallel group (again in the backward of a fully
// recomputed forward) and its data-parallel collectives in its shard and expert data-parallel groups
// (ZeRO-2's after every backward, ZeRO-3's gathers before every gathering pass and reduce-scatters after
// every backward; the parameter all-gather of ZeRO-1/2 left out, as it may run beside the next step). The
// chain counts each dispatch alone and the data-parallel streams apart; sharing the scale-out NICs (an EP
// group and an expert data-parallel group both crossing racks), they take at least their summed load.
double Estimator::link_load(const WorkloadConfig& w, const StageLayers& layers, const RankGroups& g, double m,
                            const workload::MoeLayerCosts* moe) {
  using network::CollectiveKind;
  const auto& p = w.parallel;
  std::vector<std::pair<int, double>> parts;  // (profile, times)
  if (moe && layers.moe > 0 &&
      groups_[static_cast<size_t>(g.ep_id)].size() + groups_[static_cast<size_t>(g.etp_id)].size() > 2) {
    double pairs = 1 + (w.training.recompute == workload::Recompute::full ? 2 : 1);
    const EpCost& ep = ep_cost(w, g, moe->traffic);
    if (ep.links >= 0) parts.emplace_back(ep.links, m * layers.moe * pairs);
  }
  double eb = workload::activation_bytes(w.training), gb = w.training.grad_reduce_bytes;
  double unit = dense_unit_params(w), experts = layers.moe * workload::expert_params_per_layer(w);
  auto add = [&](int group, CollectiveKind kind, double bytes, double times) {
    if (groups_[static_cast<size_t>(group)].size() > 1 && bytes > 0 && times > 0)
      parts.emplace_back(group_links(p, group, kind, bytes), times);
  };
  if (p.zero < 3) {
    auto kind = p.zero == 0 ? CollectiveKind::all_reduce : CollectiveKind::reduce_scatter;
    double times = p.zero == 2 ? m : 1;
    add(g.shard_id, kind, layers.layers * unit * gb, times);
    add(g.expert_dp_id, kind, experts * gb, times);
  } else {
    double gathering_passes = p.reshard_after_forward ? 2 * m : m;
    add(g.shard_id, CollectiveKind::all_gather, layers.layers * unit * eb, gathering_passes);
    add(g.shard_id, CollectiveKind::reduce_scatter, layers.layers * unit * gb, m);
    add(g.expert_dp_id, CollectiveKind::all_gather, experts * eb, gathering_passes);
    add(g.expert_dp_id, CollectiveKind::reduce_scatter, experts * gb, m);
  }
  return busiest_link(parts);
}

// The busiest link direction's seconds of the profiles, each `times` over.
double Estimator::busiest_link(const std::vector<std::pair<int, double>>& parts) {
  if (!load_) load_.emplace(topo_);
  for (const auto& [id, times] : parts) load_->add(profiles_[static_cast<size_t>(id)], times);
  return load_->busiest_and_clear();
}

double Estimator::dp_link_seconds(const WorkloadConfig& w, const RankGroups& g, double gather_bytes,
                                  double scatter_bytes) {
  const std::vector<int>& group = groups_[static_cast<size_t>(g.shard_id)];
  if (group.size() <= 1) return 0;
  auto key = std::make_tuple(g.shard_id, w.parallel.dp_algorithm, gather_bytes, scatter_bytes);
  if (auto it = dp_link_seconds_.find(key); it != dp_link_seconds_.end()) return it->second;
  plan::CommPhase all;
  for (auto [kind, bytes] : {std::pair{network::CollectiveKind::all_gather, gather_bytes},
                             std::pair{network::CollectiveKind::reduce_scatter, scatter_bytes}}) {
    if (bytes <= 0) continue;
    for (const auto& phase :
         network::plan_collective(topo_, workload::data_parallel_collective(w.parallel, kind, group, bytes)))
      all.flows.insert(all.flows.end(), phase.flows.begin(), phase.flows.end());
  }
  double seconds = network::idle_phase_cost(topo_, all).transfer;
  dp_link_seconds_.emplace(std::move(key), seconds);
  return seconds;
}

// Data-parallel time no schedule hides (megatron_gradients.cpp, megatron_sharding.cpp, megatron_layers.cpp):
// without dp_overlap, the stage's whole gradient reduction follows its last pass (ZeRO-2: every backward,
// which waits for it); with dp_overlap, chunk 0's final backward (every schedule's last pass of a stage)
// reduces its gradients in buckets as its pieces finish (ZeRO-2: all but the last bucket already beside
// it), then its routed experts, one after the other on the data-parallel stream: the last bucket and the
// experts follow the stage's last pass, and every bucket and the experts its start. ZeRO-3 gathers each
// pass's first unit with the chunk's head units before that pass's compute (all of the pass's units
// without prefetch), its gather stream carries every gather of every pass one after the other, and its
// data-parallel stream every backward's reduce-scatter, the stage's last pass's first part after its
// compute. A MoE layer's routed experts reduce (and with ZeRO-3 gather) in the expert data-parallel group
// on the same streams, after the dense units. ZeRO 0-2 reduce the builder's chunks' parameters
// (chunk_dense_params: a bucket's size is not monotone in them); ZeRO-3 counts the transformer layers
// with each layer's dense part as the smaller of a dense layer's and a MoE layer's (attention, router,
// shared experts), and the chunks' head parameters (chunk_head_params). Each stage counts its own layers
// in the groups of one of its ranks.
Estimator::DataParallelTime Estimator::dp_time(const WorkloadConfig& w, int stage, const StageLayers& layers,
                                               const RankGroups& g, double m) {
  using network::CollectiveKind;
  const auto& p = w.parallel;
  if (static_cast<long long>(p.dp) * p.cp == 1) return {};
  double stage_layers = layers.layers, stage_moe = layers.moe;
  if (stage_layers < 1) return {};
  int v = std::max(1, p.virtual_stages);
  double eb = workload::activation_bytes(w.training), gb = w.training.grad_reduce_bytes;
  double unit = dense_unit_params(w), expert_unit = workload::expert_params_per_layer(w);
  double experts = stage_moe * expert_unit;  // routed, per rank
  auto dense = [&](CollectiveKind kind, double bytes) { return dp_seconds(w, g, kind, bytes); };
  auto routed = [&](CollectiveKind kind, double bytes) { return expert_dp_seconds(w, g, kind, bytes); };
  if (p.zero < 3) {
    // ZeRO 0 all-reduces (the experts too), 1 and 2 reduce-scatter, the routed experts after the dense part.
    auto kind = p.zero == 0 ? CollectiveKind::all_reduce : CollectiveKind::reduce_scatter;
    double stage_dense = 0;  // with the embedding and output layer, as the builder reduces them
    for (int c = 0; c < v; ++c) stage_dense += workload::chunk_dense_params(w, v, stage, c);
    double once = dense(kind, stage_dense * gb) + routed(kind, experts * gb);
    DataParallelTime t;
    // ZeRO-2 reduce-scatters each chunk's gradients after every backward of it (m x v of them, each a 1/v
    // share; counted as m whole-stage reductions, which is less: latency once each), one after the other
    // on the data-parallel stream, which the step waits for.
    if (p.zero == 2) t.stream = m * once;
    if (!p.dp_overlap) {
      if (p.zero < 2)
        t.tail = once;
      else
        t.chain = m * once;
      // ZeRO 1/2 gather the updated parameters after the optimizer step (megatron_gradients.cpp).
      if (p.zero > 0)
        t.after_optimizer = dense(CollectiveKind::all_gather, stage_dense * eb) +
                            routed(CollectiveKind::all_gather, experts * eb);
      return t;
    }
    double params = workload::chunk_dense_params(w, v, stage, 0);
    int buckets = workload::gradient_bucket_count(p, params, gb);
    double last_bucket = dense(kind, params * gb / buckets);
    double chunk_moe = static_cast<double>(workload::moe_layers_in_chunk(w, v, stage, 0));
    double chunk_experts = routed(kind, chunk_moe * expert_unit * gb);
    double other_buckets =
        p.zero == 2 ? dense(kind, params * gb * (buckets - 1) / buckets) : (buckets - 1) * last_bucket;
    t.tail = last_bucket + chunk_experts;
    t.final_pass = other_buckets + t.tail;
    return t;
  }
  // Before each pass of a chunk with layers, its first layer (with prefetch) or all of them (without), with
  // the chunk's head units (embedding, final norm, output layer: gathered with the first, as the builder's
  // fsdp_units), then likewise its first MoE layer's experts; only before the forward when the backward
  // keeps the forward's gathers (reshard_after_forward: false). The stage's last pass (chunk 0's backward)
  // reduce-scatters that first part after its compute, and the rest of the chunk from its start on.
  double gathering_passes = p.reshard_after_forward ? 2 * m : m;
  double exposed = 0, heads = 0;
  DataParallelTime t;
  for (int c = 0; c < v; ++c) {
    double chunk = static_cast<double>(workload::chunk_layers(w, v, stage, c));
    if (chunk < 1) continue;
    double chunk_heads = workload::chunk_head_params(w, v, stage, c);
    double moe = static_cast<double>(workload::moe_layers_in_chunk(w, v, stage, c));
    bool prefetch = p.dp_overlap && chunk > 1;
    double first = (prefetch ? unit : chunk * unit) + chunk_heads;
    double first_experts = (p.dp_overlap ? std::min(1.0, moe) : moe) * expert_unit;
    exposed += dense(CollectiveKind::all_gather, first * eb) +
               (first_experts > 0 ? routed(CollectiveKind::all_gather, first_experts * eb) : 0);
    heads += chunk_heads;
    if (c == 0) {
      t.tail = dense(CollectiveKind::reduce_scatter, first * gb) +
               (first_experts > 0 ? routed(CollectiveKind::reduce_scatter, first_experts * gb) : 0);
      double rest = prefetch ? dense(CollectiveKind::reduce_scatter, (chunk - 1) * unit * gb) : 0;
      double rest_experts = (moe * expert_unit - first_experts) * gb;
      if (rest_experts > 0) rest += routed(CollectiveKind::reduce_scatter, rest_experts);
      t.final_pass = rest + t.tail;
    }
  }
  t.chain = gathering_passes * exposed;
  // Every pass gathers its chunk's layers and heads (the gather stream) and every backward reduce-scatters
  // them (the data-parallel stream, at the gradient precision), each stream's collectives one after the
  // other, at least one collective's time for all of its bytes (and one for the experts'); the dense ones
  // cross the same links, which need at least the busiest one's bytes over its bandwidth.
  double gathered = gathering_passes * (stage_layers * unit + heads) * eb,
         scattered = m * (stage_layers * unit + heads) * gb;
  double gather_stream = dense(CollectiveKind::all_gather, gathered) +
                         routed(CollectiveKind::all_gather, gathering_passes * experts * eb);
  double scatter_stream = dense(CollectiveKind::reduce_scatter, scattered) +
                          routed(CollectiveKind::reduce_scatter, m * experts * gb);
  t.stream = std::max({gather_stream, scatter_stream, dp_link_seconds(w, g, gathered, scattered)});
  return t;
}

// Idle-network time of one expert data-parallel group's collective (as StepBuilder::expert_groups lays
// them out: ep x etp ranks apart, stages between with tp-cp-pp-dp).
double Estimator::expert_dp_seconds(const WorkloadConfig& w, const RankGroups& g,
                                    network::CollectiveKind kind, double bytes) {
  return group_seconds(w.parallel, g.expert_dp_id, kind, bytes);
}

Estimator::MergedSeconds Estimator::merged_seconds(const std::vector<int>& group,
                                                   const std::vector<workload::TpCollective>& per_layer) {
  std::vector<plan::CommPlan> plans;
  for (const auto& c : per_layer)
    plans.push_back(network::plan_collective(topo_, network::make_collective(c.kind, group, c.bytes)));
  MergedSeconds out;
  if (plans.empty()) return out;
  network::PhaseCost cost = network::idle_phase_cost(topo_, network::serial_merge(plans));
  out.wire = cost.wire_latency;
  out.per_layer = cost.total() - cost.wire_latency;
  return out;
}

// One ring of the step builder's cp_ring_plan (megatron_overlap.cpp): every rank sends its block to the
// next at once; every other ring of the step only adds flows to the same links.
double Estimator::cp_step_seconds(const WorkloadConfig& w, double bytes) {
  workload::ParallelLayout layout{.tp = w.parallel.tp, .pp = 1, .dp = 1, .cp = w.parallel.cp};
  auto ring = layout.cp_group(0, 0, 0);
  plan::CommPhase phase;
  double latency = 0;
  for (size_t i = 0; i < ring.size(); ++i) {
    int to = ring[(i + 1) % ring.size()];
    phase.flows.push_back({ring[i], to, bytes});
    latency = std::max(latency, network::step_latency(topo_, ring[i], to));
  }
  phase.latency = topo_.fabric_profile.launch_latency + latency;
  // The builder merges a pass's ring steps into one plan (scaled by the steps), whose wires' latency is
  // paid once, not per step: leave it out here, where it would be counted per step.
  network::PhaseCost cost = network::idle_phase_cost(topo_, phase);
  return cost.total() - cost.wire_latency;
}

// Serial tensor-parallel time of a layer's passes: with the userbuffers overlap (in effect: estimate()
// turns it off where the device has none) the exposed share of an overlappable collective
// (split_tp_overlap), and nothing of the ones Transformer Engine runs asynchronously beside a GEMM without
// userbuffers. The step builder's tp_plan (megatron_layers.cpp) merges a chunk pass's collectives into one
// phase: summed per link rather than one after the other (where collectives load different links, the
// sum of their times overstates the phase), the wires' latency paid once. A MoE layer's pass holds the
// attention half's (and the shared experts') TP-group collectives; its expert-TP ones travel with the
// dispatch (ep_cost).
Estimator::MergedSeconds Estimator::serial_tp(const WorkloadConfig& w,
                                              std::initializer_list<const PassCost*> passes) {
  if (w.parallel.tp == 1) return {};
  std::pair<int, std::vector<std::pair<int, double>>> key{w.parallel.tp, {}};  // (kind, bytes) serial
  for (const PassCost* pass : passes)
    for (const auto& c : pass->tp) {
      double share = c.exposed_share >= 0 ? c.exposed_share : 1.0 / w.parallel.tp;
      bool overlapped = (w.parallel.tp_overlap || c.async) && c.overlap_seconds > 0;
      double bytes = overlapped ? c.bytes * share : c.bytes;
      if (bytes > 0) key.second.emplace_back(static_cast<int>(c.kind), bytes);
    }
  auto it = serial_tp_.find(key);
  if (it != serial_tp_.end()) return it->second;
  std::vector<workload::TpCollective> serial;
  for (auto [kind, bytes] : key.second) serial.push_back({static_cast<network::CollectiveKind>(kind), bytes});
  workload::ParallelLayout layout{.tp = w.parallel.tp, .pp = 1, .dp = 1, .cp = 1};
  return serial_tp_[key] = merged_seconds(layout.tp_group(0, 0, 0), serial);
}

// One group's dispatch and combine of one MoE layer, as StepBuilder::ep_plan (moe_step.cpp) runs them:
// the all-to-all (or all-gather / reduce-scatter) over a rank's EP group and the expert-TP all-gather and
// reduce-scatter over its ETP group, one after the other; every other group only adds flows to the same
// links.
const Estimator::EpCost& Estimator::ep_cost(const WorkloadConfig& w, const RankGroups& g,
                                            const workload::MoeTraffic& t) {
  const std::vector<int>&ep_group = groups_[static_cast<size_t>(g.ep_id)],
        &etp_group = groups_[static_cast<size_t>(g.etp_id)];
  auto key = std::make_tuple(g.ep_id, g.etp_id, static_cast<int>(w.moe.dispatcher), t.dispatch_bytes,
                             t.etp_bytes, t.flex_to_each_remote_peer, t.flex_to_each_local_peer);
  if (auto it = ep_costs_.find(key); it != ep_costs_.end()) return it->second;
  using network::CollectiveKind;
  bool a2a = w.moe.dispatcher != workload::MoeDispatcher::allgather;
  std::vector<plan::CommPlan> steps;
  auto add = [&](const std::vector<int>& g, CollectiveKind kind, double bytes) {
    if (g.size() > 1 && bytes > 0)
      steps.push_back(network::plan_collective(topo_, network::make_collective(kind, g, bytes)));
  };
  bool flex = w.moe.dispatcher == workload::MoeDispatcher::flex;
  auto dispatch = [&](CollectiveKind kind) {
    if (!flex) return add(ep_group, kind, t.dispatch_bytes);
    if (ep_group.size() < 2) return;
    network::HierarchicalDispatch d{ep_group, t.flex_to_each_remote_peer, t.flex_to_each_local_peer};
    steps.push_back({network::plan_hierarchical_dispatch(topo_, d)});
  };
  dispatch(a2a ? CollectiveKind::all_to_all : CollectiveKind::all_gather);
  add(etp_group, CollectiveKind::all_gather, t.etp_bytes);
  add(etp_group, CollectiveKind::reduce_scatter, t.etp_bytes);
  dispatch(a2a ? CollectiveKind::all_to_all : CollectiveKind::reduce_scatter);
  EpCost cost;
  if (!steps.empty()) {
    plan::CommPlan merged{network::serial_merge(steps)};
    network::PhaseCost phase = network::idle_phase_cost(topo_, merged[0]);
    cost.seconds = phase.total();
    cost.wire = phase.wire_latency;
    cost.links = profile(network::idle_link_seconds(topo_, merged));
  }
  return ep_costs_.emplace(std::move(key), cost).first->second;
}

// The compute slowdown beside ZeRO-2/3 traffic (megatron_sharding.cpp): a chunk's pass runs
// overlap_compute_slowdown slower while the gathers and reduce-scatters that overlap it run, its kernels
// (the serial task's) stretched by min(comm (1 - 1/slowdown), compute (slowdown - 1)), which grows with
// both. Counted with less of each: the dense units' and the experts' collectives as dp_exposed counts them
// (the smaller unit, one group's idle time, ZeRO-2's buckets of the layers alone), and the pass's kernels
// less all that the TP overlap, ring attention or the shared experts' overlap may move beside them.
Estimator::ShardingSlowdown Estimator::sharding_slowdown(const WorkloadConfig& w,
                                                         const workload::LayerCosts& dense,
                                                         const workload::MoeLayerCosts* moe) {
  const auto& p = w.parallel;
  ShardingSlowdown out;
  out.slowdown = topo_.device_profile.overlap_compute_slowdown;
  out.applies = out.slowdown > 1 && p.dp_overlap && p.zero >= 2 && static_cast<long long>(p.dp) * p.cp > 1 &&
                w.moe.overlap != workload::MoeOverlap::combined_1f1b;
  if (!out.applies) return out;
  auto serial_seconds = [&](const PassCost& pass) {
    double t = pass.seconds;
    for (const auto& c : pass.tp)
      if ((p.tp_overlap || c.async) && c.overlap_seconds > 0) t -= c.overlap_seconds;
    return t;
  };
  bool cp = p.cp > 1;
  double fwd_attention = dense.forward.attention_seconds,
         bwd_attention = dense.recompute.attention_seconds + dense.backward.attention_seconds;
  if (moe) {
    fwd_attention = std::max(fwd_attention, moe->layer.forward.attention_seconds);
    bwd_attention = std::max(bwd_attention,
                             moe->layer.recompute.attention_seconds + moe->layer.backward.attention_seconds);
    out.moe_forward =
        serial_seconds(moe->layer.forward) - moe->shared_forward_seconds - (cp ? fwd_attention : 0);
    out.moe_backward = serial_seconds(moe->layer.recompute) + serial_seconds(moe->layer.backward) -
                       moe->shared_backward_seconds - (cp ? bwd_attention : 0);
  }
  out.dense_forward = serial_seconds(dense.forward) - (cp ? fwd_attention : 0);
  out.dense_backward =
      serial_seconds(dense.recompute) + serial_seconds(dense.backward) - (cp ? bwd_attention : 0);
  return out;
}

// The extra seconds of one chunk's forward and backward under sharding_slowdown (layers, MoE layers and
// sliding-window layers of the chunk, each window_* seconds shorter).
std::pair<double, double> Estimator::chunk_slowdown(const WorkloadConfig& w, const RankGroups& g,
                                                    const ShardingSlowdown& s, long long layers,
                                                    long long moe_layers, double windowed,
                                                    double window_forward, double window_backward) {
  if (!s.applies) return {0, 0};
  using network::CollectiveKind;
  const auto& p = w.parallel;
  double L = static_cast<double>(layers), M = static_cast<double>(moe_layers);
  double fwd = (L - M) * s.dense_forward + M * s.moe_forward - windowed * window_forward;
  double bwd = (L - M) * s.dense_backward + M * s.moe_backward - windowed * window_backward;
  double eb = workload::activation_bytes(w.training), gb = w.training.grad_reduce_bytes;
  double unit = dense_unit_params(w);
  double fwd_comm = 0, bwd_comm = 0;
  if (p.zero >= 3) {
    if (layers < 2) return {0, 0};  // one unit: nothing prefetched beside the compute
    double rest_experts = (M - std::min(1.0, M)) * workload::expert_params_per_layer(w);
    fwd_comm = dp_seconds(w, g, CollectiveKind::all_gather, (L - 1) * unit * eb) +
               expert_dp_seconds(w, g, CollectiveKind::all_gather, rest_experts * eb);
    bwd_comm = (p.reshard_after_forward ? fwd_comm : 0) +
               dp_seconds(w, g, CollectiveKind::reduce_scatter, (L - 1) * unit * gb) +
               expert_dp_seconds(w, g, CollectiveKind::reduce_scatter, rest_experts * gb);
  } else {
    double params = L * unit;  // ZeRO-2: all buckets but the last reduce beside the backward
    int buckets = workload::gradient_bucket_count(p, params, gb);
    if (buckets > 1)
      bwd_comm = dp_seconds(w, g, CollectiveKind::reduce_scatter, params * gb * (buckets - 1) / buckets);
  }
  auto extra = [sd = s.slowdown](double compute, double comm) {
    if (compute <= 0 || comm <= 0) return 0.0;
    return std::min(comm * (1 - 1 / sd), compute * (sd - 1));
  };
  return {extra(fwd, fwd_comm), extra(bwd, bwd_comm)};
}

namespace {

// Of a stage's groups of one kind (group(i) for i < count), how many nodes each spans.
template <class Group>
std::vector<int> spans(const topology::Topology& topo, int count, Group group) {
  std::vector<int> out(static_cast<size_t>(count));
  std::vector<int> nodes;
  for (int i = 0; i < count; ++i) {
    nodes.clear();
    for (int r : group(i)) nodes.push_back(topo.node_of(r));
    std::sort(nodes.begin(), nodes.end());
    out[static_cast<size_t>(i)] = static_cast<int>(std::unique(nodes.begin(), nodes.end()) - nodes.begin());
  }
  return out;
}

}  // namespace

// A rank's groups: its HSDP shard of the gradient group (the whole dp x cp group without HSDP), its expert
// data-parallel, expert-parallel and expert tensor-parallel groups (data_parallel_groups,
// expert_groups).
Estimator::RankGroups Estimator::rank_groups(const workload::ParallelConfig& p, bool moe, int device) {
  const auto layout = workload::rank_layout(p);
  auto at = layout.position(device);
  RankGroups g;
  g.shard_id = intern(layout.shard_group(at.tp_rank, at.pp_rank, layout.shard_index(device)));
  if (moe) {
    auto e = layout.expert_position(device);
    g.expert_dp_id = intern(layout.expert_dp_group(at.pp_rank, e.etp_rank, e.ep_rank));
    g.ep_id = intern(layout.ep_group(at.pp_rank, e.etp_rank, e.edp_rank));
    g.etp_id = intern(layout.etp_group(at.pp_rank, e.ep_rank, e.edp_rank));
  } else {
    g.expert_dp_id = g.ep_id = g.etp_id = intern({});
  }
  return g;
}

// The pipeline columns the bound follows: column 0 (rank 0 of stage 0 and its peers in the later stages)
// and the column whose data-parallel, expert-parallel and expert data-parallel groups span the most nodes,
// summed over the stages. The builder runs every group of a kind at once and each stage waits for all of
// them, so each column's chain is a lower bound; where stages or groups straddle the scale-up domains
// (64-rank blocks on 72-GPU NVL72 racks), the widest column's groups cross the scale-out fabric where
// column 0's may stay inside one domain.
const std::vector<std::vector<Estimator::RankGroups>>& Estimator::columns(const WorkloadConfig& w) {
  const auto& p = w.parallel;
  bool experts = w.moe.enabled();
  int shard = p.zero > 0 && p.shard_group > 0 ? p.shard_group * p.cp : 0;
  auto key =
      std::make_tuple(p.tp, p.cp, p.dp, p.pp, p.ep, p.etp, static_cast<int>(p.rank_order), shard, experts);
  if (auto it = columns_.find(key); it != columns_.end()) return it->second;
  const auto layout = workload::rank_layout(p);
  int columns = p.tp * p.cp * p.dp;
  // Only the tp ranks whose data-parallel groups the builder simulates (rank 0's rail peers; it folds the
  // others): a column of another tp rank would count a group the simulation leaves out.
  const std::vector<int> rails = workload::simulated_tp_ranks(topo_, layout);
  std::vector<long long> width(static_cast<size_t>(columns), -1);
  for (int c = 0; c < columns; ++c)
    if (std::find(rails.begin(), rails.end(), c % p.tp) != rails.end()) width[static_cast<size_t>(c)] = 0;
  for (int s = 0; s < p.pp; ++s) {
    // Spans of the stage's shard groups (tp rank, chunk), EP groups (etp rank, edp rank) and expert
    // data-parallel groups (etp rank, ep rank), each computed once.
    int chunks = layout.shard_groups();
    auto shard_spans =
        spans(topo_, p.tp * chunks, [&](int i) { return layout.shard_group(i / chunks, s, i % chunks); });
    std::vector<int> ep_spans, edp_spans;
    if (experts) {
      int edp = layout.expert_dp();
      ep_spans = spans(topo_, p.etp * edp, [&](int i) { return layout.ep_group(s, i / edp, i % edp); });
      edp_spans =
          spans(topo_, p.etp * p.ep, [&](int i) { return layout.expert_dp_group(s, i / p.ep, i % p.ep); });
    }
    for (int c = 0; c < columns; ++c) {
      if (width[static_cast<size_t>(c)] < 0) continue;
      int device = layout.device(c % p.tp, c / p.tp % p.cp, c / (p.tp * p.cp), s);
      auto at = layout.position(device);
      width[static_cast<size_t>(c)] +=
          shard_spans[static_cast<size_t>(at.tp_rank * chunks + layout.shard_index(device))];
      if (experts) {
        auto e = layout.expert_position(device);
        width[static_cast<size_t>(c)] +=
            ep_spans[static_cast<size_t>(e.etp_rank * layout.expert_dp() + e.edp_rank)] +
            edp_spans[static_cast<size_t>(e.etp_rank * p.ep + e.ep_rank)];
      }
    }
  }
  int widest = static_cast<int>(std::max_element(width.begin(), width.end()) - width.begin());
  std::vector<std::vector<RankGroups>> out;
  for (int c : widest == 0 ? std::vector<int>{0} : std::vector<int>{0, widest}) {
    std::vector<RankGroups> column;
    for (int s = 0; s < p.pp; ++s)
      column.push_back(
          rank_groups(p, experts, layout.device(c % p.tp, c / p.tp % p.cp, c / (p.tp * p.cp), s)));
    out.push_back(std::move(column));
  }
  return columns_.emplace(key, std::move(out)).first->second;
}

double Estimator::transfer_seconds(const WorkloadConfig& w, int from, int to) {
  const auto& p = w.parallel;
  // The bytes of one flow (a 1/tp slice with sequence parallelism or scatter/gather) key the cache.
  double bytes = workload::pipeline_transfer_flow_bytes(w, w.training.micro_batch);
  auto key = std::make_tuple(p.tp, p.cp, p.dp, p.pp, static_cast<int>(p.rank_order), from, to, bytes);
  if (auto it = transfers_.find(key); it != transfers_.end()) return it->second;
  const auto layout = workload::rank_layout(p);
  double t =
      network::idle_phase_cost(
          topo_, workload::pipeline_transfer(topo_, w, layout, workload::simulated_tp_ranks(topo_, layout),
                                             w.training.micro_batch, from, to))
          .total();
  return transfers_.emplace(key, t).first->second;
}

const std::vector<int>& Estimator::blocking_calls(const WorkloadConfig& w) {
  const auto& p = w.parallel;
  int v = p.virtual_stages;
  auto [schedule, combined] = builder_schedule(w);
  auto key = std::make_tuple(static_cast<int>(schedule), p.pp, microbatches(w), v, combined,
                             p.microbatch_group, p.overlap_p2p_comm, p.overlap_p2p_comm_warmup_flush);
  if (auto it = blocking_calls_.find(key); it != blocking_calls_.end()) return it->second;
  auto programs =
      workload::build_schedule(schedule, p.pp, microbatches(w), v, combined,
                               {p.overlap_p2p_comm, p.overlap_p2p_comm_warmup_flush}, p.microbatch_group);
  return blocking_calls_.emplace(key, workload::blocking_transfer_calls(programs)).first->second;
}

// ZeRO 1/2 with dp_overlap (Megatron's overlap_param_gather): the step starts gathering chunk 0's
// parameters in buckets on the gather stream and each bucket's piece of the first forward waits for its
// bucket (StepBuilder::add_gathered_forward). That forward starts no earlier than the first bucket and ends
// no earlier than the last bucket and its piece; what that adds beyond the fill before the stage and the
// forward's own time (`compute`: its kernels, split evenly in the builder's pieces; `forward`: all the
// chain counts for it) is on the stage's chain.
double Estimator::parameter_gather_wait(const WorkloadConfig& w, int stage, const RankGroups& g,
                                        double compute, double forward, double fill) {
  const auto& p = w.parallel;
  if (p.zero < 1 || p.zero > 2 || !p.dp_overlap || static_cast<long long>(p.dp) * p.cp == 1) return 0;
  int v = std::max(1, p.virtual_stages);
  double params = workload::chunk_dense_params(w, v, stage, 0), eb = workload::activation_bytes(w.training);
  int buckets = workload::gradient_bucket_count(p, params, eb);
  using network::CollectiveKind;
  double bucket = kCommMargin * dp_seconds(w, g, CollectiveKind::all_gather, params * eb / buckets);
  // The buckets one after the other take at least one gather of them all (its latency counted once: the
  // replay does not pay each bucket's in full).
  double all = kCommMargin * dp_seconds(w, g, CollectiveKind::all_gather, params * eb);
  return std::max({0.0, bucket - fill, all + compute / buckets - forward - fill});
}

CandidateEstimate Estimator::estimate(const WorkloadConfig& given) {
  // The kernels as the step builder costs them: userbuffers only where the device has them (a copy only
  // then: the search asks for hundreds of thousands of candidates).
  bool overlap = workload::tp_overlap_in_effect(given.parallel, topo_.device);
  if (overlap == given.parallel.tp_overlap) return estimate_as_built(given);
  WorkloadConfig w = given;
  w.parallel.tp_overlap = overlap;
  return estimate_as_built(w);
}

CandidateEstimate Estimator::estimate_as_built(const WorkloadConfig& w) {
  CandidateEstimate e;
  e.memory_bytes = memory(w);
  e.fits = e.memory_bytes <= topo_.device.hbm_bytes;
  if (!e.fits) return e;
  const auto& cm = compute_model(w);
  int mb = w.training.micro_batch, p = w.parallel.pp, v = w.parallel.virtual_stages;
  double m = microbatches(w);
  auto dense = workload::layer_costs(w, mb, cm);
  auto window = workload::sliding_window_saving(w, mb, cm, dense);  // per sliding-window layer
  auto head = workload::head_costs(w, mb, cm);
  // Ring attention (megatron_overlap.cpp): per layer and pass, cp-1 KV steps overlap cp-1 of the cp
  // attention blocks; what the transfers take beyond those blocks is exposed. The slowdown of overlapped
  // compute is left out (it only adds). The all-gather variant's collectives run serially, merged into one
  // phase per chunk pass as the builder's cp_collective_plan merges them (one group's idle-network time, the
  // wires' latency apart: paid once per chunk pass).
  auto exposed_cp = [&](std::initializer_list<std::pair<const PassCost*, workload::CpPass>> passes) {
    MergedSeconds out;
    if (w.parallel.cp == 1) return out;
    double cp = w.parallel.cp;
    if (w.parallel.cp_algorithm == workload::CpAlgorithm::all_gather) {
      std::vector<workload::TpCollective> per_layer;
      for (const auto& [cost, which] : passes)
        for (const auto& c : workload::cp_gather_collectives(w, mb, which)) per_layer.push_back(c);
      workload::ParallelLayout layout{.tp = w.parallel.tp, .pp = 1, .dp = 1, .cp = w.parallel.cp};
      return merged_seconds(layout.cp_group(0, 0, 0), per_layer);
    }
    for (const auto& [cost, which] : passes) {
      double bytes = workload::cp_ring_step_bytes(w, mb, which);
      if (bytes <= 0 || cost->attention_seconds <= 0) continue;
      out.per_layer += std::max(0.0, (cp - 1) * (cp_step_seconds(w, bytes) - cost->attention_seconds / cp));
    }
    return out;
  };
  using workload::CpPass;
  const MergedSeconds cp_forward = exposed_cp({{&dense.forward, CpPass::forward}}),
                      cp_backward = exposed_cp(
                          {{&dense.recompute, CpPass::recompute}, {&dense.backward, CpPass::backward}});
  const ChainCost cp_fwd{0, 0, kCommMargin * cp_forward.per_layer, 0},
      cp_bwd{0, 0, kCommMargin * cp_backward.per_layer, 0};
  const MergedSeconds tp_fwd = serial_tp(w, {&dense.forward}),
                      tp_bwd = serial_tp(w, {&dense.recompute, &dense.backward});
  LayerChain dense_layer{
      ChainCost{dense.forward.seconds, kCommMargin * tp_fwd.per_layer, 0, 0} + cp_fwd,
      ChainCost{dense.recompute.seconds + dense.backward.seconds, kCommMargin * tp_bwd.per_layer, 0, 0} +
          cp_bwd,
      ChainCost{0, kCommMargin * tp_fwd.wire}, ChainCost{0, kCommMargin * tp_bwd.wire}};
  std::optional<workload::MoeLayerCosts> moe_costs;
  if (w.moe.enabled()) moe_costs = workload::moe_layer_costs(w, mb, cm, dense);
  const ShardingSlowdown sharding = sharding_slowdown(w, dense, moe_costs ? &*moe_costs : nullptr);
  // Along each pipeline column the bound follows, each stage: its own chunks for every microbatch (with the
  // embedding or the output layer on the end stages), after the first microbatch's forward through the
  // column's ranks of the stages before it (their first chunk) and before that microbatch's backward back
  // through them, which ends with stage 0's last pass; the data-parallel time its rank's groups cannot hide
  // (dp_time) follows its own last pass, and stage 0's follows that chain. A MoE layer's dispatch runs in
  // the rank's expert-parallel group.
  ChainCost best;
  double best_dp = 0, stream = 0;
  // Every stage's optimizer step follows the model-parallel sync, which waits for every stage's gradients:
  // the longest of them (with what follows it on its data-parallel stream) after any stage's chain.
  std::vector<double> optimizer_steps;
  for (int s = 0; s < p; ++s) optimizer_steps.push_back(workload::optimizer_step_seconds(w, s, cm));
  double optimizer = *std::max_element(optimizer_steps.begin(), optimizer_steps.end()), finish = optimizer;
  auto longest = [&](const ChainCost& chain, double dp) {
    if (chain.sum() + dp > best.sum() + best_dp) best = chain, best_dp = dp;
  };
  // Combined 1F1B's host floor is a pair's, not a pass's: its last pass is not costed apart.
  bool passes_apart = !(moe_costs && w.moe.overlap == workload::MoeOverlap::combined_1f1b);
  // Pipeline transfers (idle network): the first microbatch's between neighbouring stages, and on each
  // stage one for every call that holds it (blocking_calls), at its cheapest neighbour's.
  std::vector<double> forward_hop(p, 0), backward_hop(p, 0), held(p, 0);
  if (p > 1) {
    const std::vector<int>& calls = blocking_calls(w);
    for (int s = 0; s + 1 < p; ++s) {
      forward_hop[s] = kCommMargin * transfer_seconds(w, s, s + 1);
      backward_hop[s] = kCommMargin * transfer_seconds(w, s + 1, s);
    }
    bool ring = v > 1;  // chunks pass from the last stage back to the first
    double wrap = ring ? kCommMargin * std::min(transfer_seconds(w, p - 1, 0), transfer_seconds(w, 0, p - 1))
                       : std::numeric_limits<double>::infinity();
    for (int s = 0; s < p; ++s) {
      double cheapest = std::min({s + 1 < p ? std::min(forward_hop[s], backward_hop[s]) : wrap,
                                  s > 0 ? std::min(forward_hop[s - 1], backward_hop[s - 1]) : wrap});
      if (std::isfinite(cheapest)) held[s] = calls[s] * cheapest;
    }
  }
  for (const auto& column : columns(w)) {
    ChainCost fill_forward, fill_backward;
    double after_first_stage = 0;  // what follows stage 0's last pass
    for (int s = 0; s < p; ++s) {
      const RankGroups& g = column[s];
      const LayerChain moe_layer = moe_costs ? moe_chain(w, g, *moe_costs, cp_fwd, cp_bwd) : dense_layer;
      ChainCost body;
      ChainCost first_forward, first_backward;
      for (int c = 0; c < v; ++c) {
        long long layers = workload::chunk_layers(w, v, s, c);
        long long moe = workload::moe_layers_in_chunk(w, v, s, c);
        double windowed = static_cast<double>(
            workload::windowed_layers_in(w.model, workload::chunk_first_layer(w, v, s, c), layers));
        ChainCost fwd = dense_layer.forward * static_cast<double>(layers - moe) + moe_layer.forward * moe;
        ChainCost bwd = dense_layer.backward * static_cast<double>(layers - moe) + moe_layer.backward * moe;
        fwd.compute -= windowed * window.forward;
        bwd.compute -= windowed * window.backward;
        auto [fwd_slowed, bwd_slowed] =
            chunk_slowdown(w, g, sharding, layers, moe, windowed, window.forward, window.backward);
        fwd.compute += fwd_slowed;
        bwd.compute += bwd_slowed;
        if (layers > 0) {  // the all-gather variant's merged collectives: their wires once per chunk pass
          fwd.cp += kCommMargin * cp_forward.wire;
          bwd.cp += kCommMargin * cp_backward.wire;
        }
        // The merged phases' wires, once per chunk pass: the dense layers' and (phases of their own) the
        // MoE layers'.
        if (layers - moe > 0) fwd = fwd + dense_layer.once_forward, bwd = bwd + dense_layer.once_backward;
        if (moe > 0) fwd = fwd + moe_layer.once_forward, bwd = bwd + moe_layer.once_backward;
        body = body + (fwd + bwd) * m;
        if (c == 0) first_forward = fwd, first_backward = bwd;
      }
      if (s == 0) body.compute += m * (head.embedding_forward.seconds + head.embedding_backward.seconds);
      if (s == p - 1) body.compute += m * (head.output_forward.seconds + head.output_backward.seconds);
      body.pp += held[s];
      if (s == 0) {
        first_forward.compute += head.embedding_forward.seconds;
        first_backward.compute += head.embedding_backward.seconds;
      }
      // The stage's last pass: chunk 0's backward of the last microbatch, with the output layer's where
      // chunk 0 is the last chunk of the last stage.
      ChainCost last_pass = first_backward;
      if (s == p - 1 && v == 1) last_pass.compute += head.output_backward.seconds;
      const StageLayers layers = stage_layers_of(w, s);
      const DataParallelTime dp = dp_time(w, s, layers, g, m);
      double after = kCommMargin * dp.tail;
      if (passes_apart) after = std::max(after, kCommMargin * dp.final_pass - last_pass.sum());
      if (s == 0) after_first_stage = after;
      // The gathered forward's pieces hold all of chunk 0's forward work: its output layer's too where it
      // is the last chunk, which the body counts apart.
      double output_forward = s == p - 1 && v == 1 ? head.output_forward.seconds : 0;
      double chain_dp = kCommMargin * dp.chain +
                        parameter_gather_wait(w, s, g, first_forward.compute + output_forward,
                                              first_forward.sum() + output_forward, fill_forward.sum());
      longest(fill_forward + body, chain_dp + after);
      longest(fill_forward + body + fill_backward, chain_dp + after_first_stage);
      stream = std::max(stream, dp.stream);
      finish = std::max(finish, optimizer_steps[s] + kCommMargin * dp.after_optimizer);
      if (moe_costs) stream = std::max(stream, link_load(w, layers, g, m, &*moe_costs));
      // The next stage waits for this one's first chunk (and stage 0's embedding) both ways.
      fill_forward = fill_forward + first_forward;
      fill_backward = first_backward + fill_backward;
      fill_forward.pp += forward_hop[s];
      fill_backward.pp += backward_hop[s];
    }
  }
  e.compute = best.compute;
  e.optimizer = optimizer;
  e.tp_comm = best.tp;
  e.cp_comm = best.cp;
  e.ep_comm = best.ep;
  e.pp_comm = best.pp;
  e.dp_comm = best_dp + finish - optimizer;
  e.lower_bound = std::max(best.sum() + e.dp_comm + optimizer, kCommMargin * stream);
  return e;
}

// A MoE layer's passes (moe_step.cpp moe_chunk_work): the attention half and the MoE block's kernels, the
// dispatch and combine after them (pairs: a fully recomputed forward dispatches again in the backward), or
// beside the shared experts with moe.overlap: dispatch. Without that overlap the block also waits for the
// host (moe.host_*): attention + max(block + dispatch, host) is below what the builder's stall gives,
// since the contended dispatch is never shorter than ep_cost's idle one. The builder merges a chunk
// pass's dispatches into one phase (ep_phase_plan), whose wires' latency is paid once: per layer the
// dispatch counts without it (`transfer`), and the chunk pass adds it once where nothing hides it; the host
// stall and the combined pair's floor subtract the dispatch with it, which only lowers them.
Estimator::LayerChain Estimator::moe_chain(const WorkloadConfig& w, const RankGroups& g,
                                           const workload::MoeLayerCosts& moe, const ChainCost& cp_fwd,
                                           const ChainCost& cp_bwd) {
  const EpCost& ep = ep_cost(w, g, moe.traffic);
  double dispatch = kCommMargin * ep.seconds, transfer = kCommMargin * (ep.seconds - ep.wire);
  bool overlap = w.moe.overlap == workload::MoeOverlap::dispatch && w.moe.shared_experts > 0;
  // Combined 1F1B runs the steady state's all-to-alls beside the other pass's compute: none counted.
  bool combined = w.moe.overlap == workload::MoeOverlap::combined_1f1b;
  double pairs_bwd = w.training.recompute == workload::Recompute::full ? 2 : 1;
  auto pass = [&](double seconds, double block, double shared, double host, double pairs) {
    if (overlap) return ChainCost{seconds, 0, 0, std::max(0.0, pairs * transfer - shared)};
    if (combined) return ChainCost{seconds, 0, 0, 0};  // the pair's host floor: below
    // The host's time beyond the block and the dispatch.
    double stall = std::max(0.0, host - block - pairs * dispatch);
    return ChainCost{seconds + stall, 0, 0, pairs * transfer};
  };
  const MergedSeconds tp_fwd = serial_tp(w, {&moe.layer.forward}),
                      tp_bwd = serial_tp(w, {&moe.layer.recompute, &moe.layer.backward});
  const double ep_wire = overlap || combined ? 0 : kCommMargin * ep.wire;
  LayerChain out;
  out.forward = pass(moe.layer.forward.seconds, moe.block_forward_seconds, moe.shared_forward_seconds,
                     w.moe.host_forward_s, 1) +
                cp_fwd;
  out.forward.tp = kCommMargin * tp_fwd.per_layer;
  out.once_forward = ChainCost{0, kCommMargin * tp_fwd.wire, 0, ep_wire};
  out.backward = pass(moe.layer.recompute.seconds + moe.layer.backward.seconds, moe.block_backward_seconds,
                      moe.shared_backward_seconds, w.moe.host_backward_s, pairs_bwd) +
                 cp_bwd;
  out.backward.tp = kCommMargin * tp_bwd.per_layer;
  out.once_backward = ChainCost{0, kCommMargin * tp_bwd.wire, 0, ep_wire};
  if (combined) {
    // A paired layer lasts at least both passes' host time (moe_combined_1f1b.cpp); its segments are never
    // shorter than its compute and its all-to-alls side by side, so their sum hides no more than this.
    double both = moe.layer.forward.seconds + moe.layer.recompute.seconds + moe.layer.backward.seconds;
    out.backward.compute += std::max(0.0, w.moe.host_forward_s + w.moe.host_backward_s - both - 2 * dispatch);
  }
  return out;
}

}  // namespace podsim::driver
