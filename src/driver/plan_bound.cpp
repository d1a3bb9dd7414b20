// Closed-form memory and lower bound of a plan candidate (plan_bound.hpp).
#include "podsim/driver/plan_bound.hpp"

#include <algorithm>

#include "podsim/network/collective.hpp"
#include "podsim/network/link_load.hpp"
#include "podsim/workload/parallel_layout.hpp"
#include "podsim/workload/pipeline_schedule.hpp"
#include "podsim/workload/transformer/layer_ops.hpp"
#include "podsim/workload/transformer/memory_model.hpp"

namespace podsim::driver {

using workload::PassCost;
using workload::Schedule;
using workload::WorkloadConfig;

namespace {

int microbatches(const WorkloadConfig& w) {
  return static_cast<int>(w.training.global_batch / (static_cast<long long>(w.parallel.dp) * w.training.micro_batch));
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
  for (const auto& stage : workload::stage_memory(w, w.training.micro_batch, v, it->second, topo_.device_profile))
    peak = std::max(peak, stage.total());
  return peak;
}

double Estimator::tp_seconds(const WorkloadConfig& w, int kind, double bytes) {
  auto key = std::make_tuple(w.parallel.tp, kind, bytes);
  auto it = collectives_.find(key);
  if (it != collectives_.end()) return it->second;
  workload::ParallelLayout layout{.tp = w.parallel.tp, .pp = 1, .dp = 1, .cp = 1};
  auto c = network::make_collective(static_cast<network::CollectiveKind>(kind), layout.tp_group(0, 0, 0), bytes);
  double t = network::idle_plan_time(topo_, network::plan_collective(topo_, c));
  collectives_[key] = t;
  return t;
}

CandidateEstimate Estimator::estimate(const WorkloadConfig& w) {
  CandidateEstimate e;
  e.memory_bytes = memory(w);
  e.fits = e.memory_bytes <= topo_.device.hbm_bytes;
  if (!e.fits) return e;
  const auto& cm = compute_model(w);
  int mb = w.training.micro_batch, p = w.parallel.pp, v = w.parallel.virtual_stages;
  double m = microbatches(w), chunk_layers = static_cast<double>(w.model.layers) / (p * v);
  auto layer = workload::layer_costs(w, mb, cm);
  auto head = workload::head_costs(w, mb, cm);
  // Serial tensor-parallel time of a pass: with the userbuffers overlap (plan_keys.cpp enumerates
  // tp_overlap only where it takes effect) the first of tp chunks of an overlappable collective.
  auto serial_tp = [&](const PassCost& pass) {
    double t = 0;
    if (w.parallel.tp == 1) return t;
    for (const auto& c : pass.tp) {
      double bytes = w.parallel.tp_overlap && c.overlap_seconds > 0 ? c.bytes / w.parallel.tp : c.bytes;
      t += tp_seconds(w, static_cast<int>(c.kind), bytes);
    }
    return t;
  };
  // A small margin keeps float rounding of the merged collectives from crossing the simulation.
  constexpr double kCommMargin = 0.99;
  double fwd = chunk_layers * layer.forward.seconds;
  double bwd = chunk_layers * (layer.recompute.seconds + layer.backward.seconds);
  double fwd_tp = kCommMargin * chunk_layers * serial_tp(layer.forward);
  double bwd_tp = kCommMargin * chunk_layers * (serial_tp(layer.recompute) + serial_tp(layer.backward));
  double embedding = head.embedding_forward.seconds + head.embedding_backward.seconds;
  double output = head.output_forward.seconds + head.output_backward.seconds;
  double body = m * v * (fwd + bwd), body_tp = m * v * (fwd_tp + bwd_tp);
  double ramp = (p - 1) * (fwd + bwd), ramp_tp = (p - 1) * (fwd_tp + bwd_tp);
  if (p == 1) {
    e.compute = body + m * (embedding + output);
    e.tp_comm = body_tp;
  } else {
    double first = body + m * embedding, last = ramp + embedding + body + m * output;
    e.compute = std::max(first, last);
    e.tp_comm = body_tp + (last >= first ? ramp_tp : 0);
  }
  e.lower_bound = e.compute + e.tp_comm;
  return e;
}

}  // namespace podsim::driver
