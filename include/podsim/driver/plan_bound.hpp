// What `podsim plan` knows about a candidate before simulating it: its memory per device from the
// closed-form memory model (the same stage_memory the builder refuses out-of-memory steps with), and a
// lower bound on its simulated step time.
//
// The bound is what no schedule can beat: a pipeline stage cannot start before the first microbatch's
// forward crossed the stages before it (their first chunk and each transfer), must then run all of its own
// compute (the kernels of its layers for every microbatch, at the compute model's efficiencies, which the
// simulation only ever slows) and the calls that hold it for a transfer, and is followed by the backward
// of its last microbatch back through the stages below it; every chunk pass also waits for its
// tensor-parallel collectives that are not overlapped, counted at their idle-network time (contention
// only lengthens them). The data-parallel time no schedule hides sits on that chain (ZeRO-2's reductions
// without dp_overlap, ZeRO-3's gathers) or after a stage's last pass (the whole reduction without
// dp_overlap; with it, the last gradient bucket and the routed experts of that pass); then comes the
// slowest stage's optimizer step, which starts only once every stage's gradients are complete
// (workload/transformer/optimizer_step), and ZeRO 1/2's parameter gather after it without overlap.
// Context-parallel transfers beyond ring attention's are left out: the bound stays a bound, only looser.
// Each stage's chain is counted with its own layers (pipeline_split: uneven splits, dense and MoE layers);
// ring attention's transfers beyond their attention blocks and a MoE layer's dispatch and combine (at one
// group's idle-network time) are on it. The chains follow pipeline columns (a rank per stage), each rank's
// collectives timed in its own groups: where stages or groups straddle scale-up domains, some ranks'
// groups cross the scale-out fabric and rank 0's may not (Estimator::columns). refine() adds, for the
// candidates about to be simulated, the whole step's load on the busiest link.
#pragma once

#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "podsim/calibration/compute_model.hpp"
#include "podsim/network/collective.hpp"
#include "podsim/network/link_load.hpp"
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
  double pp_comm = 0;      // of which pipeline transfers: the first microbatch's between the stages and
                           // one per call that holds a stage (workload::blocking_transfer_calls)
  double optimizer = 0;    // of which the slowest stage's optimizer step, after every stage's gradients
  // Set by Estimator::refine before a candidate is simulated (0 until then): the busiest link's seconds
  // of the whole step's expert dispatches and data-parallel collectives, every group of every stage. The
  // lower bound is at least this.
  double fabric_load = 0;
};

// Caches what candidates share (schedules' peak activations, collective times).
class Estimator {
 public:
  // A stage's transformer layers and MoE layers.
  struct StageLayers {
    double layers = 0, moe = 0;
  };
  explicit Estimator(const topology::Topology& topo) : topo_(topo) {}
  double memory(const workload::WorkloadConfig& w);
  CandidateEstimate estimate(const workload::WorkloadConfig& w);
  // Raises e.lower_bound to the step's fabric load (CandidateEstimate::fabric_load): a bound too slow to
  // compute for every combination (each EP group's all-to-all routed), asked for only by candidates about
  // to be simulated.
  void refine(const workload::WorkloadConfig& w, CandidateEstimate& e);

 private:
  // estimate() of a workload whose tp_overlap is the one in effect on the device.
  CandidateEstimate estimate_as_built(const workload::WorkloadConfig& w);
  // Idle-network seconds of a pass's collectives in `group`, merged into one phase as the step builder
  // merges a chunk pass's (serial_merge of the per-layer collectives scaled by the layers): per layer
  // without the wires' latency, which the merged phase pays once per chunk pass.
  struct MergedSeconds {
    double per_layer = 0, wire = 0;
  };
  MergedSeconds merged_seconds(const std::vector<int>& group,
                               const std::vector<workload::TpCollective>& per_layer);
  // One rank's groups whose collectives the bound times, and the pipeline columns it follows (a column:
  // one rank per stage, the stages' ranks of one tp x cp x dp position), by layout (plan_bound.cpp).
  // Groups are interned: a cache key compares an id rather than a few hundred ranks.
  struct RankGroups {
    int shard_id = 0, expert_dp_id = 0, ep_id = 0, etp_id = 0;
  };
  RankGroups rank_groups(const workload::ParallelConfig& p, bool moe, int device);
  int intern(std::vector<int> group);
  std::map<std::vector<int>, int> group_ids_;
  std::vector<std::vector<int>> groups_;  // by id
  const std::vector<std::vector<RankGroups>>& columns(const workload::WorkloadConfig& w);
  std::map<std::tuple<int, int, int, int, int, int, int, int, bool>, std::vector<std::vector<RankGroups>>>
      columns_;
  double dp_seconds(const workload::WorkloadConfig& w, const RankGroups& g, network::CollectiveKind kind,
                    double bytes);
  // The bytes-bound time of a step's all-gathers and reduce-scatters in one shard group, whichever order
  // and overlap they run in: the busiest link's load over its bandwidth.
  double dp_link_seconds(const workload::WorkloadConfig& w, const RankGroups& g, double gather_bytes,
                         double scatter_bytes);
  std::map<std::tuple<int, std::string, double, double>, double> dp_link_seconds_;
  double expert_dp_seconds(const workload::WorkloadConfig& w, const RankGroups& g,
                           network::CollectiveKind kind, double bytes);
  // One stage's rank's data-parallel seconds no schedule hides, with m microbatches (plan_bound.cpp).
  struct DataParallelTime {
    double chain = 0;            // on the stage's compute chain (waits before its passes go on)
    double tail = 0;             // after the stage's last pass ends
    double final_pass = 0;       // after its last pass (chunk 0's final backward) starts
    double stream = 0;           // the whole step on its busiest data-parallel stream
    double after_optimizer = 0;  // after the stage's optimizer step (ZeRO 1/2's parameter gather)
  };
  DataParallelTime dp_time(const workload::WorkloadConfig& w, int stage, const StageLayers& layers,
                           const RankGroups& g, double m);
  // What ZeRO 1/2's overlapped parameter gather at the step's start adds to a stage's first forward.
  double parameter_gather_wait(const workload::WorkloadConfig& w, int stage, const RankGroups& g,
                               double compute, double forward, double fill);
  // Seconds per link direction of the collectives the bound meets, by profile id.
  std::vector<network::LinkSeconds> profiles_;
  int profile(network::LinkSeconds links);
  int group_links(const workload::ParallelConfig& p, int group, network::CollectiveKind kind, double bytes);
  std::map<std::tuple<int, int, int, double>, int> group_links_;
  // The busiest link's seconds of one stage's rank's dispatches and data-parallel collectives in a step.
  double link_load(const workload::WorkloadConfig& w, const StageLayers& layers, const RankGroups& g,
                   double m, const workload::MoeLayerCosts* moe);
  double busiest_link(const std::vector<std::pair<int, double>>& parts);
  // Every group of a stage at once: its EP and ETP groups' dispatch and combine, or its data-parallel
  // groups' collective of `bytes` ((0) shard groups of the simulated tp ranks, (1) their HSDP replica
  // all-reduce, (2) expert data-parallel groups); profile ids, cached by layout, stage and bytes.
  int stage_ep_links(const workload::WorkloadConfig& w, int stage, const workload::MoeTraffic& t);
  int stage_dp_links(const workload::WorkloadConfig& w, int stage, int which, network::CollectiveKind kind,
                     double bytes);
  std::map<std::tuple<std::vector<int>, int, int, int, double, double, double, double>, int> stage_links_;
  std::optional<network::LinkLoadSum> load_;
  // Seconds on one stage's chain, by what they are.
  struct ChainCost {
    double compute = 0, tp = 0, cp = 0, ep = 0, pp = 0;
    double sum() const { return compute + tp + cp + ep + pp; }
    ChainCost operator+(const ChainCost& o) const {
      return {compute + o.compute, tp + o.tp, cp + o.cp, ep + o.ep, pp + o.pp};
    }
    ChainCost operator*(double k) const { return {compute * k, tp * k, cp * k, ep * k, pp * k}; }
  };
  // Idle-network seconds of one pipeline transfer from stage `from` to `to` (workload::pipeline_transfer),
  // cached by layout, stages and bytes.
  double transfer_seconds(const workload::WorkloadConfig& w, int from, int to);
  std::map<std::tuple<int, int, int, int, int, int, int, double>, double> transfers_;
  // Per stage, its calls that hold it for a transfer (workload::blocking_transfer_calls), by schedule.
  const std::vector<int>& blocking_calls(const workload::WorkloadConfig& w);
  std::map<std::tuple<int, int, int, int, bool, int, bool, bool>, std::vector<int>> blocking_calls_;
  struct LayerChain {
    ChainCost forward, backward;  // backward with its recomputation
    // Paid once per chunk pass that holds such layers: the wires' latency of the phases the step builder
    // merges a chunk pass's collectives into (tensor-parallel, and the expert-parallel dispatch).
    ChainCost once_forward, once_backward;
  };
  // The serial tensor-parallel collectives of a layer's passes (the backward's: recompute and backward),
  // merged as the step builder's tp_plan merges a chunk pass's (plan_bound.cpp).
  MergedSeconds serial_tp(const workload::WorkloadConfig& w,
                          std::initializer_list<const workload::PassCost*> passes);
  std::map<std::pair<int, std::vector<std::pair<int, double>>>, MergedSeconds>
      serial_tp_;  // (tp, collectives)
  // A rank's expert-parallel group's dispatch and combine: idle-network seconds, and its link profile.
  struct EpCost {
    double seconds = 0, wire = 0;  // seconds with the wires' latency, which is also given apart
    int links = -1;
  };
  const EpCost& ep_cost(const workload::WorkloadConfig& w, const RankGroups& g,
                        const workload::MoeTraffic& t);
  // ep_cost by what it depends on (the EP and ETP groups, dispatcher, the traffic's bytes): a search
  // meets the same few many times, and a 64-rank all-to-all's plan routes every pair.
  std::map<std::tuple<int, int, int, double, double, double, double>, EpCost> ep_costs_;
  LayerChain moe_chain(const workload::WorkloadConfig& w, const RankGroups& g,
                       const workload::MoeLayerCosts& moe, const ChainCost& cp_fwd, const ChainCost& cp_bwd);
  // ZeRO-2/3 with dp_overlap: the overlap_compute_slowdown of the compute beside the sharding traffic, with
  // the seconds per layer and pass of the kernels it surely stretches (plan_bound.cpp).
  struct ShardingSlowdown {
    bool applies = false;
    double slowdown = 1, dense_forward = 0, dense_backward = 0, moe_forward = 0, moe_backward = 0;
  };
  ShardingSlowdown sharding_slowdown(const workload::WorkloadConfig& w, const workload::LayerCosts& dense,
                                     const workload::MoeLayerCosts* moe);
  std::pair<double, double> chunk_slowdown(const workload::WorkloadConfig& w, const RankGroups& g,
                                           const ShardingSlowdown& s, long long layers, long long moe_layers,
                                           double windowed, double window_forward, double window_backward);
  // Idle-network seconds of one context-parallel ring step of that many bytes (one ring, rank 0's).
  double cp_step_seconds(const workload::WorkloadConfig& w, double bytes);
  const calibration::ComputeModel& compute_model(const workload::WorkloadConfig& w);
  const topology::Topology& topo_;
  std::optional<calibration::ComputeModel> cm_;  // every candidate has the same precision
  // (schedule, p, m, v, combined, microbatch group) -> peak passes in flight per stage
  std::map<std::tuple<int, int, int, int, bool, int>, std::vector<int>> peaks_;
  // A data-parallel collective's idle-network seconds in an interned group (data_parallel_collective's
  // algorithm).
  double group_seconds(const workload::ParallelConfig& p, int group, network::CollectiveKind kind,
                       double bytes);
  std::map<std::tuple<int, int, int, double>, double> group_seconds_;
};

}  // namespace podsim::driver
