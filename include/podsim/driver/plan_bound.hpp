// What `podsim plan` knows about a candidate before simulating it: its memory per device from the
// closed-form memory model (the same stage_memory the builder refuses out-of-memory steps with), and a
// lower bound on its simulated step time.
//
// The bound is what no schedule can beat: the last pipeline stage cannot start before the first
// microbatch's forward crossed the p-1 stages before it, must then run all of its own compute (the
// kernels of its layers for every microbatch, at the compute model's efficiencies, which the simulation
// only ever slows), and is followed by the backward of that last microbatch through the p-1 stages
// below it; every chunk pass also waits for its tensor-parallel collectives that are not overlapped,
// counted at their idle-network time (contention only lengthens them); so is the data-parallel time no
// schedule hides (the reduction after the flush without dp_overlap, ZeRO-3's gathers). Pipeline and
// context-parallel transfers and the optimizer are left out: the bound stays a bound, only looser.
// Each stage's chain is counted with its own layers (pipeline_split: uneven splits, dense and MoE layers);
// ring attention's transfers beyond their attention blocks and a MoE layer's dispatch and combine (at one
// group's idle-network time) are on it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "podsim/calibration/compute_model.hpp"
#include "podsim/network/collective.hpp"
#include "podsim/topology/topology.hpp"
#include "podsim/workload/transformer/layer_ops.hpp"
#include "podsim/workload/transformer/moe_costs.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::driver {

struct CandidateEstimate {
  double memory_bytes = 0;  // peak over pipeline stages, per device
  bool fits = false;
  double lower_bound = 0;  // seconds; only computed when it fits
  double compute = 0;      // of which compute of the slowest stage (with its ramp)
  double tp_comm = 0;      // of which serial tensor-parallel collectives
  double dp_comm = 0;      // of which data-parallel collectives no schedule hides
  double cp_comm = 0;      // of which ring-attention transfers their attention blocks cannot hide, or
                           // the all-gather variant's collectives
  double ep_comm = 0;      // of which MoE dispatch and combine not hidden beside the shared experts
};

// Caches what candidates share (schedules' peak activations, collective times).
class Estimator {
 public:
  explicit Estimator(const topology::Topology& topo) : topo_(topo) {}
  double memory(const workload::WorkloadConfig& w);
  CandidateEstimate estimate(const workload::WorkloadConfig& w);

 private:
  double tp_seconds(const workload::WorkloadConfig& w, int kind, double bytes);
  double dp_seconds(const workload::WorkloadConfig& w, network::CollectiveKind kind, double bytes);
  // The bytes-bound time of a step's all-gathers and reduce-scatters in one shard group, whichever order
  // and overlap they run in: the busiest link's load over its bandwidth.
  double dp_link_seconds(const workload::WorkloadConfig& w, double gather_bytes, double scatter_bytes);
  std::map<std::tuple<std::vector<int>, std::string, double, double>, double> dp_link_seconds_;
  double expert_dp_seconds(const workload::WorkloadConfig& w, network::CollectiveKind kind, double bytes);
  // (exposed after or before the compute chain, total on the ZeRO-3 gather stream), seconds.
  std::pair<double, double> dp_exposed(const workload::WorkloadConfig& w, double passes);
  // Seconds on one stage's chain, by what they are.
  struct ChainCost {
    double compute = 0, tp = 0, cp = 0, ep = 0;
    double sum() const { return compute + tp + cp + ep; }
    ChainCost operator+(const ChainCost& o) const {
      return {compute + o.compute, tp + o.tp, cp + o.cp, ep + o.ep};
    }
    ChainCost operator*(double k) const { return {compute * k, tp * k, cp * k, ep * k}; }
  };
  struct LayerChain {
    ChainCost forward, backward;  // backward with its recomputation
  };
  double serial_tp(const workload::WorkloadConfig& w, const workload::PassCost& pass);
  double ep_seconds(const workload::WorkloadConfig& w, const workload::MoeTraffic& t);
  // ep_seconds by what it depends on (ep, etp, dispatcher, the traffic's bytes): a search meets the same
  // few many times, and a 64-rank all-to-all's plan routes every pair.
  std::map<std::tuple<int, int, int, double, double, double, double>, double> ep_seconds_;
  LayerChain moe_chain(const workload::WorkloadConfig& w, const workload::MoeLayerCosts& moe,
                       const ChainCost& cp_fwd, const ChainCost& cp_bwd);
  // ZeRO-2/3 with dp_overlap: the overlap_compute_slowdown of the compute beside the sharding traffic, with
  // the seconds per layer and pass of the kernels it surely stretches (plan_bound.cpp).
  struct ShardingSlowdown {
    bool applies = false;
    double slowdown = 1, dense_forward = 0, dense_backward = 0, moe_forward = 0, moe_backward = 0;
  };
  ShardingSlowdown sharding_slowdown(const workload::WorkloadConfig& w, const workload::LayerCosts& dense,
                                     const workload::MoeLayerCosts* moe);
  std::pair<double, double> chunk_slowdown(const workload::WorkloadConfig& w, const ShardingSlowdown& s,
                                           long long layers, long long moe_layers, double windowed,
                                           double window_forward, double window_backward);
  // Idle-network seconds of one context-parallel ring step of that many bytes (one ring, rank 0's).
  double cp_step_seconds(const workload::WorkloadConfig& w, double bytes);
  // Idle-network seconds of one all-gather variant collective over the first context-parallel group.
  double cp_gather_seconds(const workload::WorkloadConfig& w, int kind, double bytes);
  const calibration::ComputeModel& compute_model(const workload::WorkloadConfig& w);
  const topology::Topology& topo_;
  std::optional<calibration::ComputeModel> cm_;  // every candidate has the same precision
  // (schedule, p, m, v, combined, microbatch group) -> peak passes in flight per stage
  std::map<std::tuple<int, int, int, int, bool, int>, std::vector<int>> peaks_;
  std::map<std::tuple<int, int, double>, double> collectives_;  // (tp, kind, bytes)
  double group_seconds(const network::Collective& c);
  // (group, kind, algorithm, protocol, bytes) -> idle-network seconds
  std::map<std::tuple<std::vector<int>, int, int, int, double>, double> group_seconds_;
};

}  // namespace podsim::driver
