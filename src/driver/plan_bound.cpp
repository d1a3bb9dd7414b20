// Closed-form memory and lower bound of a plan candidate (plan_bound.hpp).
#include "podsim/driver/plan_bound.hpp"

#include <algorithm>

#include "podsim/network/collective.hpp"
#include "podsim/network/link_load.hpp"
#include "podsim/workload/parallel_layout.hpp"
#include "podsim/workload/pipeline_schedule.hpp"
#include "podsim/workload/transformer/context_parallel.hpp"
#include "podsim/workload/transformer/layer_ops.hpp"
#include "podsim/workload/transformer/memory_model.hpp"
#include "podsim/workload/transformer/precision_bytes.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"

namespace podsim::driver {

using workload::PassCost;
using workload::Schedule;
using workload::WorkloadConfig;

namespace {

int microbatches(const WorkloadConfig& w) {
  return static_cast<int>(w.training.global_batch /
                          (static_cast<long long>(w.parallel.dp) * w.training.micro_batch));
}

// The rates the step builder gives its compute model (StepBuilder::describe).
calibration::DeviceRates rates_for(const topology::Topology& topo, const WorkloadConfig& w) {
  calibration::DeviceRates rates;
  rates.peak_flops = topo.device.peak(w.training.precision);
  rates.hbm_bandwidth = topo.device.hbm_bandwidth;
  rates.sm_count = topo.device.sm_count;
  rates.element_bytes = workload::element_bytes(w.training.precision);
  rates.format = topology::to_string(w.training.precision);
  if (topology::bytes_per_element(w.training.precision) < 2)
    rates.attention_peak_flops = topo.device.peak(topology::Precision::bf16);
  return rates;
}

// The layer kernels (layer_ops) are a dense layer's. A MoE layer's FFN does, per token, top_k routed
// experts' and the shared experts' work (fewer with a capacity factor below 1 dropping tokens; more on the
// busiest expert), so a dense FFN of that width, or the dense one where it is narrower, is never slower
// than any layer of the model: the bound stays a bound.
workload::WorkloadConfig moe_floor(const WorkloadConfig& w) {
  if (!w.moe.enabled()) return w;
  const auto& moe = w.moe;
  double kept = moe.dropless() ? 1.0 : std::min(1.0, moe.capacity_factor);
  double width = kept * static_cast<double>(moe.top_k * moe.ffn_hidden) +
                 static_cast<double>(moe.shared_experts * moe.shared_ffn_hidden);
  WorkloadConfig floor = w;
  floor.model.ffn_hidden =
      std::min(w.model.ffn_hidden, static_cast<long long>(width) / w.parallel.tp * w.parallel.tp);
  floor.moe = {};
  return floor;
}

}  // namespace

const calibration::ComputeModel& Estimator::compute_model(const WorkloadConfig& w) {
  if (!cm_) cm_.emplace(topo_.device_profile, rates_for(topo_, w));
  return *cm_;
}

double Estimator::memory(const WorkloadConfig& w) {
  int p = w.parallel.pp, m = microbatches(w), v = w.parallel.virtual_stages;
  Schedule schedule = p == 1 ? Schedule::none : w.parallel.schedule;
  auto key = std::make_tuple(static_cast<int>(schedule), p, m, v);
  auto it = peaks_.find(key);
  if (it == peaks_.end())
    it = peaks_.emplace(key, workload::peak_in_flight(workload::build_schedule(schedule, p, m, v))).first;
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
  const auto& p = w.parallel;
  workload::ParallelLayout layout{.tp = p.tp, .pp = p.pp, .dp = p.dp, .cp = p.cp};
  std::vector<int> group = layout.grad_group(0, 0);
  size_t n = p.zero > 0 && p.shard_group > 0 ? static_cast<size_t>(p.shard_group) * p.cp : group.size();
  if (n <= 1 || bytes <= 0) return 0;
  group.resize(n);
  auto c = network::make_collective(kind, group, bytes);
  if (kind != network::CollectiveKind::all_gather) c.algorithm = network::parse_algorithm(p.dp_algorithm);
  return network::idle_plan_time(topo_, network::plan_collective(topo_, c));
}

// Data-parallel time no schedule hides (megatron_gradients.cpp, megatron_sharding.cpp), beyond the
// compute chain: without dp_overlap, the stage's whole gradient reduction follows the pipeline flush;
// ZeRO-3 gathers each pass's first unit before that pass's compute (all of the pass's units without
// prefetch), and its gather stream carries every gather of every pass one after the other. Only the
// transformer layers' parameters are counted (embeddings left out) and MoE is left out: a looser bound.
std::pair<double, double> Estimator::dp_exposed(const WorkloadConfig& w, double passes) {
  const auto& p = w.parallel;
  if (w.moe.enabled() || static_cast<long long>(p.dp) * p.cp == 1) return {0, 0};
  double layers = static_cast<double>(w.model.layers) / p.pp;
  double unit = workload::layer_params(w.model) / p.tp;
  if (p.zero < 3) {
    if (p.dp_overlap) return {0, 0};
    auto kind = p.zero == 0 ? network::CollectiveKind::all_reduce : network::CollectiveKind::reduce_scatter;
    return {dp_seconds(w, kind, layers * unit * w.training.grad_reduce_bytes), 0};
  }
  double eb = workload::activation_bytes(w.training);
  bool prefetch = p.dp_overlap && layers > 1;
  double first = dp_seconds(w, network::CollectiveKind::all_gather, (prefetch ? 1 : layers) * unit * eb);
  double rest = prefetch ? dp_seconds(w, network::CollectiveKind::all_gather, (layers - 1) * unit * eb) : 0;
  return {passes * first, passes * (first + rest)};
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
  return network::idle_plan_time(topo_, {phase});
}

CandidateEstimate Estimator::estimate(const WorkloadConfig& w) {
  CandidateEstimate e;
  e.memory_bytes = memory(w);
  e.fits = e.memory_bytes <= topo_.device.hbm_bytes;
  if (!e.fits) return e;
  const auto& cm = compute_model(w);
  int mb = w.training.micro_batch, p = w.parallel.pp, v = w.parallel.virtual_stages;
  double m = microbatches(w), chunk_layers = static_cast<double>(w.model.layers) / (p * v);
  auto layer = workload::layer_costs(moe_floor(w), mb, cm);
  auto head = workload::head_costs(w, mb, cm);
  // Serial tensor-parallel time of a pass: with the userbuffers overlap (plan_keys.cpp enumerates
  // tp_overlap only where it takes effect) the first of tp chunks of an overlappable collective.
  auto serial_tp = [&](const PassCost& pass) {
    double t = 0;
    if (w.parallel.tp == 1 || w.moe.enabled()) return t;  // MoE layers' TP traffic differs (etp, dispatch)
    for (const auto& c : pass.tp) {
      double bytes = w.parallel.tp_overlap && c.overlap_seconds > 0 ? c.bytes / w.parallel.tp : c.bytes;
      t += tp_seconds(w, static_cast<int>(c.kind), bytes);
    }
    return t;
  };
  // Ring attention (megatron_overlap.cpp): per layer and pass, cp-1 KV steps overlap cp-1 of the cp
  // attention blocks; what the transfers take beyond those blocks is exposed. The slowdown of overlapped
  // compute is left out (it only adds).
  auto exposed_cp = [&](std::initializer_list<std::pair<const PassCost*, workload::CpPass>> passes) {
    if (w.parallel.cp == 1 || w.parallel.cp_algorithm != workload::CpAlgorithm::ring) return 0.0;
    double cp = w.parallel.cp, t = 0;
    for (const auto& [cost, which] : passes) {
      double bytes = workload::cp_ring_step_bytes(w, mb, which);
      if (bytes <= 0 || cost->attention_seconds <= 0) continue;
      t += std::max(0.0, (cp - 1) * (cp_step_seconds(w, bytes) - cost->attention_seconds / cp));
    }
    return t;
  };
  // A small margin keeps float rounding of the merged collectives from crossing the simulation.
  constexpr double kCommMargin = 0.99;
  double fwd = chunk_layers * layer.forward.seconds;
  double bwd = chunk_layers * (layer.recompute.seconds + layer.backward.seconds);
  double fwd_tp = kCommMargin * chunk_layers * serial_tp(layer.forward);
  double bwd_tp = kCommMargin * chunk_layers * (serial_tp(layer.recompute) + serial_tp(layer.backward));
  using workload::CpPass;
  double fwd_cp = kCommMargin * chunk_layers * exposed_cp({{&layer.forward, CpPass::forward}});
  double bwd_cp = kCommMargin * chunk_layers *
                  exposed_cp({{&layer.recompute, CpPass::recompute}, {&layer.backward, CpPass::backward}});
  double embedding = head.embedding_forward.seconds + head.embedding_backward.seconds;
  double output = head.output_forward.seconds + head.output_backward.seconds;
  double body = m * v * (fwd + bwd), body_tp = m * v * (fwd_tp + bwd_tp), body_cp = m * v * (fwd_cp + bwd_cp);
  double ramp = (p - 1) * (fwd + bwd), ramp_tp = (p - 1) * (fwd_tp + bwd_tp);
  double ramp_cp = (p - 1) * (fwd_cp + bwd_cp);
  if (p == 1) {
    e.compute = body + m * (embedding + output);
    e.tp_comm = body_tp;
    e.cp_comm = body_cp;
  } else {
    double first = body + m * embedding, last = ramp + embedding + body + m * output;
    e.compute = std::max(first, last);
    e.tp_comm = body_tp + (last >= first ? ramp_tp : 0);
    e.cp_comm = body_cp + (last >= first ? ramp_cp : 0);
  }
  // Each microbatch passes forward and backward through each chunk (recomputation rides in backward).
  auto [exposed, gather_stream] = dp_exposed(w, 2 * m * v);
  e.dp_comm = kCommMargin * exposed;
  e.lower_bound = std::max(e.compute + e.tp_comm + e.cp_comm + e.dp_comm, kCommMargin * gather_stream);
  return e;
}

}  // namespace podsim::driver
