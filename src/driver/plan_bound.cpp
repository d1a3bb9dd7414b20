// Closed-form memory and lower bound of a plan candidate (plan_bound.hpp).
#include "podsim/driver/plan_bound.hpp"

#include <algorithm>
#include <limits>

#include "podsim/network/collective.hpp"
#include "podsim/network/expert_dispatch.hpp"
#include "podsim/network/link_load.hpp"
#include "podsim/workload/parallel_layout.hpp"
#include "podsim/workload/pipeline_schedule.hpp"
#include "podsim/workload/transformer/context_parallel.hpp"
#include "podsim/workload/transformer/gradient_buckets.hpp"
#include "podsim/workload/transformer/layer_ops.hpp"
#include "podsim/workload/transformer/memory_model.hpp"
#include "podsim/workload/transformer/moe_math.hpp"
#include "podsim/workload/transformer/moe_memory.hpp"
#include "podsim/workload/transformer/pipeline_split.hpp"
#include "podsim/workload/transformer/precision_bytes.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"

namespace podsim::driver {

using workload::PassCost;
using workload::Schedule;
using workload::WorkloadConfig;

namespace {

// A small margin keeps float rounding of the merged collectives from crossing the simulation.
constexpr double kCommMargin = 0.99;

// The shard group of tp rank 0 of stage 0 (the whole dp x cp gradient group without HSDP), and one of its
// data-parallel collectives as the step builder runs it (megatron_gradients.cpp shard_collective).
std::vector<int> first_shard_group(const workload::ParallelConfig& p) {
  std::vector<int> group = workload::rank_layout(p).grad_group(0, 0);
  if (p.zero > 0 && p.shard_group > 0) group.resize(static_cast<size_t>(p.shard_group) * p.cp);
  return group;
}
network::Collective shard_collective(const workload::ParallelConfig& p, network::CollectiveKind kind,
                                     const std::vector<int>& group, double bytes) {
  auto c = network::make_collective(kind, group, bytes);
  if (kind != network::CollectiveKind::all_gather) c.algorithm = network::parse_algorithm(p.dp_algorithm);
  return c;
}

// A transformer layer's dense parameters per rank, as the bound counts them: the smaller of a dense layer's
// and a MoE layer's (attention, router, shared experts; the routed experts shard apart).
double dense_unit_params(const WorkloadConfig& w) {
  return workload::layer_params(w.model) / w.parallel.tp +
         std::min(0.0, workload::moe_dense_delta_per_layer(w));
}

int microbatches(const WorkloadConfig& w) {
  return static_cast<int>(w.training.global_batch /
                          (static_cast<long long>(w.parallel.dp) * w.training.micro_batch));
}

// The rates the step builder gives its compute model (StepBuilder::describe).
}  // namespace

const calibration::ComputeModel& Estimator::compute_model(const WorkloadConfig& w) {
  if (!cm_)
    cm_.emplace(calibration::with_attention_library(topo_.device_profile, w.training.attention_library),
                workload::device_rates(topo_.device, w.training.precision));
  return *cm_;
}

double Estimator::memory(const WorkloadConfig& w) {
  int p = w.parallel.pp, m = microbatches(w), v = w.parallel.virtual_stages;
  Schedule schedule = p == 1 ? Schedule::none : w.parallel.schedule;
  // Combined 1F1B holds one more forward in flight (the builder refuses it pipelined without chunks).
  bool combined = w.moe.enabled() && w.moe.overlap == workload::MoeOverlap::combined_1f1b &&
                  (p == 1 || (schedule == Schedule::interleaved && v > 1));
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

// Idle-network time of one shard group's collective (tp rank 0 of stage 0). The builder runs every
// group's collective at once (and, with HSDP, an all-reduce across groups after a reduce-scatter), which
// only adds flows to the same links: one group alone is never slower.
double Estimator::dp_seconds(const WorkloadConfig& w, network::CollectiveKind kind, double bytes) {
  std::vector<int> group = first_shard_group(w.parallel);
  if (group.size() <= 1 || bytes <= 0) return 0;
  return group_seconds(shard_collective(w.parallel, kind, group, bytes));
}

// A collective's idle-network time, cached: the bound asks for the same few groups and sizes again and
// again across the candidates.
double Estimator::group_seconds(const network::Collective& c) {
  auto key = std::make_tuple(c.group, static_cast<int>(c.kind), static_cast<int>(c.algorithm),
                             static_cast<int>(c.protocol), c.bytes);
  auto it = group_seconds_.find(key);
  if (it != group_seconds_.end()) return it->second;
  double t = network::idle_plan_time(topo_, network::plan_collective(topo_, c));
  group_seconds_.emplace(std::move(key), t);
  return t;
}

double Estimator::dp_link_seconds(const WorkloadConfig& w, double gather_bytes, double scatter_bytes) {
  std::vector<int> group = first_shard_group(w.parallel);
  if (group.size() <= 1) return 0;
  auto key = std::make_tuple(group, w.parallel.dp_algorithm, gather_bytes, scatter_bytes);
  if (auto it = dp_link_seconds_.find(key); it != dp_link_seconds_.end()) return it->second;
  plan::CommPhase all;
  for (auto [kind, bytes] : {std::pair{network::CollectiveKind::all_gather, gather_bytes},
                             std::pair{network::CollectiveKind::reduce_scatter, scatter_bytes}}) {
    if (bytes <= 0) continue;
    for (const auto& phase :
         network::plan_collective(topo_, shard_collective(w.parallel, kind, group, bytes)))
      all.flows.insert(all.flows.end(), phase.flows.begin(), phase.flows.end());
  }
  double seconds = network::idle_phase_cost(topo_, all).transfer;
  dp_link_seconds_.emplace(std::move(key), seconds);
  return seconds;
}

// Data-parallel time no schedule hides (megatron_gradients.cpp, megatron_sharding.cpp), beyond the
// compute chain: without dp_overlap, the stage's whole gradient reduction follows the pipeline flush (ZeRO-2:
// every backward, whose reductions also fill the data-parallel stream with overlap);
// ZeRO-3 gathers each pass's first unit before that pass's compute (all of the pass's units without
// prefetch), its gather stream carries every gather of every pass one after the other, and its
// data-parallel stream every backward's reduce-scatter. A MoE layer's routed experts reduce (and with ZeRO-3
// gather) in the expert data-parallel group on the same streams, after the dense units. Only the
// transformer layers' parameters are counted (embeddings left out), each layer's dense part as the smaller
// of a dense layer's and a MoE layer's (attention, router, shared experts), and each stage as the one with
// the fewest layers and MoE layers: a looser bound.
std::pair<double, double> Estimator::dp_exposed(const WorkloadConfig& w, double passes) {
  using network::CollectiveKind;
  const auto& p = w.parallel;
  if (static_cast<long long>(p.dp) * p.cp == 1) return {0, 0};
  int v = std::max(1, p.virtual_stages);
  // Per stage, its layers and MoE layers and the chunks holding at least one of each (an embedding or loss
  // slot holds none): the fewest of any stage, so that no stage is counted above what it moves.
  double inf = std::numeric_limits<double>::infinity();
  double stage_layers = inf, layer_chunks = v, stage_moe = inf, moe_chunks = v;
  for (int s = 0; s < p.pp; ++s) {
    double l = 0, c = 0, e = 0, ec = 0;
    for (int k = 0; k < v; ++k) {
      long long n = workload::chunk_layers(w, v, s, k);
      long long moe =
          w.moe.enabled() ? workload::moe_layers_in(w, workload::chunk_first_layer(w, v, s, k), n) : 0;
      l += static_cast<double>(n), c += n > 0, e += static_cast<double>(moe), ec += moe > 0;
    }
    stage_layers = std::min(stage_layers, l), layer_chunks = std::min(layer_chunks, c);
    stage_moe = std::min(stage_moe, e), moe_chunks = std::min(moe_chunks, ec);
  }
  if (stage_layers < 1) return {0, 0};
  double m = passes / (2.0 * v), eb = workload::activation_bytes(w.training),
         gb = w.training.grad_reduce_bytes;
  double unit = dense_unit_params(w), expert_unit = workload::expert_params_per_layer(w);
  double experts = stage_moe * expert_unit;  // routed, per rank
  if (p.zero < 3) {
    // ZeRO 0 all-reduces (the experts too), 1 and 2 reduce-scatter, the routed experts after the dense part.
    auto kind = p.zero == 0 ? CollectiveKind::all_reduce : CollectiveKind::reduce_scatter;
    double once = dp_seconds(w, kind, stage_layers * unit * gb) + expert_dp_seconds(w, kind, experts * gb);
    if (p.zero < 2) return {p.dp_overlap ? 0 : once, 0};
    // ZeRO-2 reduce-scatters each chunk's gradients after every backward of it (m x v of them, each a 1/v
    // share; counted as m whole-stage reductions, which is less: latency once each), one after the other
    // on the data-parallel stream, which the step waits for; exposed without dp_overlap.
    double all = m * once;
    return {p.dp_overlap ? 0 : all, all};
  }
  // Before each pass of a chunk with layers, its first layer (with prefetch) or all of them (without), then
  // likewise its first MoE layer's experts; only before the forward when the backward keeps the forward's
  // gathers (reshard_after_forward: false).
  double gathering_passes = p.reshard_after_forward ? 2 * m : m;
  double exposed =
      p.dp_overlap ? gathering_passes *
                         (layer_chunks * dp_seconds(w, CollectiveKind::all_gather, unit * eb) +
                          moe_chunks * expert_dp_seconds(w, CollectiveKind::all_gather, expert_unit * eb))
                   : gathering_passes * (dp_seconds(w, CollectiveKind::all_gather, stage_layers * unit * eb) +
                                         expert_dp_seconds(w, CollectiveKind::all_gather, experts * eb));
  // Every pass gathers its chunk's layers (the gather stream) and every backward reduce-scatters them (the
  // data-parallel stream, at the gradient precision), each stream's collectives one after the other, at
  // least one collective's time for all of its bytes (and one for the experts'); the dense ones cross the
  // same links, which need at least the busiest one's bytes over its bandwidth.
  double gathered = gathering_passes * stage_layers * unit * eb, scattered = m * stage_layers * unit * gb;
  double gather_stream = dp_seconds(w, CollectiveKind::all_gather, gathered) +
                         expert_dp_seconds(w, CollectiveKind::all_gather, gathering_passes * experts * eb);
  double scatter_stream = dp_seconds(w, CollectiveKind::reduce_scatter, scattered) +
                          expert_dp_seconds(w, CollectiveKind::reduce_scatter, m * experts * gb);
  double stream = std::max({gather_stream, scatter_stream, dp_link_seconds(w, gathered, scattered)});
  return {exposed, stream};
}

// Idle-network time of one expert data-parallel group's collective (expert rank 0 of stage 0, as
// StepBuilder::expert_groups lays them out: ep x etp ranks apart, stages between with tp-cp-pp-dp).
double Estimator::expert_dp_seconds(const WorkloadConfig& w, network::CollectiveKind kind, double bytes) {
  const auto layout = workload::rank_layout(w.parallel);
  if (layout.expert_dp() <= 1 || bytes <= 0) return 0;
  return group_seconds(shard_collective(w.parallel, kind, layout.expert_dp_group(0, 0, 0), bytes));
}

double Estimator::tp_seconds(const WorkloadConfig& w, int kind, double bytes) {
  auto key = std::make_tuple(w.parallel.tp, kind, bytes);
  auto it = collectives_.find(key);
  if (it != collectives_.end()) return it->second;
  workload::ParallelLayout layout{.tp = w.parallel.tp, .pp = 1, .dp = 1, .cp = 1};
  auto c =
      network::make_collective(static_cast<network::CollectiveKind>(kind), layout.tp_group(0, 0, 0), bytes);
  double t = network::idle_plan_time(topo_, network::plan_collective(topo_, c));
  collectives_[key] = t;
  return t;
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

// One context-parallel group's all-gather or reduce-scatter (the step builder's cp_collective_plan).
double Estimator::cp_gather_seconds(const WorkloadConfig& w, int kind, double bytes) {
  workload::ParallelLayout layout{.tp = w.parallel.tp, .pp = 1, .dp = 1, .cp = w.parallel.cp};
  auto c =
      network::make_collective(static_cast<network::CollectiveKind>(kind), layout.cp_group(0, 0, 0), bytes);
  return network::idle_plan_time(topo_, network::plan_collective(topo_, c));
}

// Serial tensor-parallel time of a pass: with the userbuffers overlap (in effect: estimate() turns it off
// where the device has none) the exposed share of an overlappable collective (split_tp_overlap), and
// nothing of the ones Transformer Engine runs asynchronously beside a GEMM without userbuffers. A MoE
// layer's pass holds the attention half's (and the shared experts') TP-group collectives; its expert-TP
// ones travel with the dispatch (ep_seconds).
double Estimator::serial_tp(const WorkloadConfig& w, const PassCost& pass) {
  double t = 0;
  if (w.parallel.tp == 1) return t;
  for (const auto& c : pass.tp) {
    double share = c.exposed_share >= 0 ? c.exposed_share : 1.0 / w.parallel.tp;
    bool overlapped = (w.parallel.tp_overlap || c.async) && c.overlap_seconds > 0;
    double bytes = overlapped ? c.bytes * share : c.bytes;
    if (bytes > 0) t += tp_seconds(w, static_cast<int>(c.kind), bytes);
  }
  return t;
}

// One group's dispatch and combine of one MoE layer, as StepBuilder::ep_plan (moe_step.cpp) runs them:
// the all-to-all (or all-gather / reduce-scatter) over the first EP group {0, etp, 2 etp, ...} and the
// expert-TP all-gather and reduce-scatter over the first ETP group, one after the other; every other
// group only adds flows to the same links.
double Estimator::ep_seconds(const WorkloadConfig& w, const workload::MoeTraffic& t) {
  const auto& p = w.parallel;
  auto key = std::make_tuple(p.ep, p.etp, static_cast<int>(w.moe.dispatcher), t.dispatch_bytes, t.etp_bytes,
                             t.flex_to_each_remote_peer, t.flex_to_each_local_peer);
  if (auto it = ep_seconds_.find(key); it != ep_seconds_.end()) return it->second;
  using network::CollectiveKind;
  bool a2a = w.moe.dispatcher != workload::MoeDispatcher::allgather;
  const auto layout = workload::rank_layout(p);  // stage 0's groups stand for all
  const std::vector<int> ep_group = layout.ep_group(0, 0, 0), etp_group = layout.etp_group(0, 0, 0);
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
  double seconds = steps.empty() ? 0 : network::idle_plan_time(topo_, {network::serial_merge(steps)});
  ep_seconds_.emplace(key, seconds);
  return seconds;
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
std::pair<double, double> Estimator::chunk_slowdown(const WorkloadConfig& w, const ShardingSlowdown& s,
                                                    long long layers, long long moe_layers, double windowed,
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
    fwd_comm = dp_seconds(w, CollectiveKind::all_gather, (L - 1) * unit * eb) +
               expert_dp_seconds(w, CollectiveKind::all_gather, rest_experts * eb);
    bwd_comm = (p.reshard_after_forward ? fwd_comm : 0) +
               dp_seconds(w, CollectiveKind::reduce_scatter, (L - 1) * unit * gb) +
               expert_dp_seconds(w, CollectiveKind::reduce_scatter, rest_experts * gb);
  } else {
    double params = L * unit;  // ZeRO-2: all buckets but the last reduce beside the backward
    int buckets = workload::gradient_bucket_count(p, params, gb);
    if (buckets > 1)
      bwd_comm = dp_seconds(w, CollectiveKind::reduce_scatter, params * gb * (buckets - 1) / buckets);
  }
  auto extra = [sd = s.slowdown](double compute, double comm) {
    if (compute <= 0 || comm <= 0) return 0.0;
    return std::min(comm * (1 - 1 / sd), compute * (sd - 1));
  };
  return {extra(fwd, fwd_comm), extra(bwd, bwd_comm)};
}

CandidateEstimate Estimator::estimate(const WorkloadConfig& given) {
  // The kernels as the step builder costs them: userbuffers only where the device has them.
  WorkloadConfig w = given;
  w.parallel.tp_overlap = workload::tp_overlap_in_effect(w.parallel, topo_.device);
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
  // compute is left out (it only adds). The all-gather variant's collectives run serially (one group's
  // idle-network time).
  auto exposed_cp = [&](std::initializer_list<std::pair<const PassCost*, workload::CpPass>> passes) {
    if (w.parallel.cp == 1) return 0.0;
    double cp = w.parallel.cp, t = 0;
    if (w.parallel.cp_algorithm == workload::CpAlgorithm::all_gather) {
      for (const auto& [cost, which] : passes)
        for (const auto& c : workload::cp_gather_collectives(w, mb, which))
          t += cp_gather_seconds(w, static_cast<int>(c.kind), c.bytes);
      return t;
    }
    for (const auto& [cost, which] : passes) {
      double bytes = workload::cp_ring_step_bytes(w, mb, which);
      if (bytes <= 0 || cost->attention_seconds <= 0) continue;
      t += std::max(0.0, (cp - 1) * (cp_step_seconds(w, bytes) - cost->attention_seconds / cp));
    }
    return t;
  };
  using workload::CpPass;
  const ChainCost cp_fwd{0, 0, kCommMargin * exposed_cp({{&dense.forward, CpPass::forward}}), 0};
  const ChainCost cp_bwd{
      0, 0,
      kCommMargin * exposed_cp({{&dense.recompute, CpPass::recompute}, {&dense.backward, CpPass::backward}}),
      0};
  LayerChain dense_layer{
      ChainCost{dense.forward.seconds, kCommMargin * serial_tp(w, dense.forward), 0, 0} + cp_fwd,
      ChainCost{dense.recompute.seconds + dense.backward.seconds,
                kCommMargin * (serial_tp(w, dense.recompute) + serial_tp(w, dense.backward)), 0, 0} +
          cp_bwd};
  LayerChain moe_layer = dense_layer;
  std::optional<workload::MoeLayerCosts> moe_costs;
  if (w.moe.enabled()) {
    moe_costs = workload::moe_layer_costs(w, mb, cm, dense);
    moe_layer = moe_chain(w, *moe_costs, cp_fwd, cp_bwd);
  }
  const ShardingSlowdown sharding = sharding_slowdown(w, dense, moe_costs ? &*moe_costs : nullptr);
  // Each stage: its own chunks for every microbatch (with the embedding or the output layer on the end
  // stages), after the first microbatch's forward through the stages before it (their first chunk) and
  // before that microbatch's backward back through them.
  ChainCost fill, drain, best;
  for (int s = 0; s < p; ++s) {
    ChainCost body;
    ChainCost first_chunk;
    for (int c = 0; c < v; ++c) {
      long long layers = workload::chunk_layers(w, v, s, c);
      long long moe =
          w.moe.enabled() ? workload::moe_layers_in(w, workload::chunk_first_layer(w, v, s, c), layers) : 0;
      double windowed = static_cast<double>(
          workload::windowed_layers_in(w.model, workload::chunk_first_layer(w, v, s, c), layers));
      ChainCost fwd = dense_layer.forward * static_cast<double>(layers - moe) + moe_layer.forward * moe;
      ChainCost bwd = dense_layer.backward * static_cast<double>(layers - moe) + moe_layer.backward * moe;
      fwd.compute -= windowed * window.forward;
      bwd.compute -= windowed * window.backward;
      auto [fwd_slowed, bwd_slowed] =
          chunk_slowdown(w, sharding, layers, moe, windowed, window.forward, window.backward);
      fwd.compute += fwd_slowed;
      bwd.compute += bwd_slowed;
      body = body + (fwd + bwd) * m;
      if (c == 0) first_chunk = fwd + bwd;
    }
    if (s == 0) body.compute += m * (head.embedding_forward.seconds + head.embedding_backward.seconds);
    if (s == p - 1) body.compute += m * (head.output_forward.seconds + head.output_backward.seconds);
    ChainCost total = fill + drain + body;
    if (total.sum() > best.sum()) best = total;
    // The next stage waits for this one's first chunk (and stage 0's embedding) both ways.
    fill = fill + first_chunk;
    if (s == 0) fill.compute += head.embedding_forward.seconds + head.embedding_backward.seconds;
  }
  e.compute = best.compute;
  e.tp_comm = best.tp;
  e.cp_comm = best.cp;
  e.ep_comm = best.ep;
  // Each microbatch passes forward and backward through each chunk (recomputation rides in backward).
  auto [exposed, gather_stream] = dp_exposed(w, 2 * m * v);
  e.dp_comm = kCommMargin * exposed;
  e.lower_bound = std::max(best.sum() + e.dp_comm, kCommMargin * gather_stream);
  return e;
}

// A MoE layer's passes (moe_step.cpp moe_chunk_work): the attention half and the MoE block's kernels, the
// dispatch and combine after them (pairs: a fully recomputed forward dispatches again in the backward), or
// beside the shared experts with moe.overlap: dispatch. Without that overlap the block also waits for the
// host (moe.host_*): attention + max(block + dispatch, host) is below what the builder's stall gives,
// since the contended dispatch is never shorter than ep_seconds' idle one.
Estimator::LayerChain Estimator::moe_chain(const WorkloadConfig& w, const workload::MoeLayerCosts& moe,
                                           const ChainCost& cp_fwd, const ChainCost& cp_bwd) {
  double dispatch = kCommMargin * ep_seconds(w, moe.traffic);
  bool overlap = w.moe.overlap == workload::MoeOverlap::dispatch && w.moe.shared_experts > 0;
  // Combined 1F1B runs the steady state's all-to-alls beside the other pass's compute: none counted.
  bool combined = w.moe.overlap == workload::MoeOverlap::combined_1f1b;
  double pairs_bwd = w.training.recompute == workload::Recompute::full ? 2 : 1;
  auto pass = [&](double seconds, double block, double shared, double host, double pairs) {
    double d = pairs * dispatch;
    if (overlap) return ChainCost{seconds, 0, 0, std::max(0.0, d - shared)};
    if (combined) return ChainCost{seconds, 0, 0, 0};  // the pair's host floor: below
    double stall = std::max(0.0, host - block - d);    // the host's time beyond the block and dispatch
    return ChainCost{seconds + stall, 0, 0, d};
  };
  LayerChain out;
  out.forward = pass(moe.layer.forward.seconds, moe.block_forward_seconds, moe.shared_forward_seconds,
                     w.moe.host_forward_s, 1) +
                cp_fwd;
  out.forward.tp = kCommMargin * serial_tp(w, moe.layer.forward);
  out.backward = pass(moe.layer.recompute.seconds + moe.layer.backward.seconds, moe.block_backward_seconds,
                      moe.shared_backward_seconds, w.moe.host_backward_s, pairs_bwd) +
                 cp_bwd;
  out.backward.tp = kCommMargin * (serial_tp(w, moe.layer.recompute) + serial_tp(w, moe.layer.backward));
  if (combined) {
    // A paired layer lasts at least both passes' host time (moe_combined_1f1b.cpp); its segments are never
    // shorter than its compute and its all-to-alls side by side, so their sum hides no more than this.
    double both = moe.layer.forward.seconds + moe.layer.recompute.seconds + moe.layer.backward.seconds;
    out.backward.compute += std::max(0.0, w.moe.host_forward_s + w.moe.host_backward_s - both - 2 * dispatch);
  }
  return out;
}

}  // namespace podsim::driver
