// Private to the transformer kind: the builder behind build_megatron_step / describe_megatron_step
// (megatron_builder.hpp says what is folded and why). Its parts live in separate files:
//   megatron_builder.cpp    costs, memory, settings, the step as a whole, the WorkloadModel
//   megatron_layers.cpp     per-chunk compute and its merged tensor-parallel collectives
//   megatron_pipeline.cpp   the pipeline schedule, point-to-point transfers and scatter/gather
//   megatron_gradients.cpp  data-parallel groups (HSDP), gradient reduction, embedding sync, optimizer
//   megatron_sharding.cpp   ZeRO-3/FSDP parameter gathers, overlapped parameter gather, the compute
//                           slowdown under overlapped communication
//   megatron_overlap.cpp    context-parallel plans, and a chunk pass's work as tasks with the
//                           communication that overlaps compute on a side stream
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "podsim/calibration/compute_model.hpp"
#include "podsim/network/collective.hpp"
#include "podsim/topology/topology.hpp"
#include "podsim/workload/parallel_layout.hpp"
#include "podsim/workload/pipeline_schedule.hpp"
#include "podsim/workload/step_plan.hpp"
#include "podsim/workload/transformer/expert_phases.hpp"
#include "podsim/workload/transformer/layer_ops.hpp"
#include "podsim/workload/transformer/moe_costs.hpp"
#include "podsim/workload/transformer/pipeline_split.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload::megatron {

class StepBuilder {
 public:
  StepBuilder(const topology::Topology& topo, const WorkloadConfig& w, int micro_batch, int virtual_stages);

  // Costs, memory and settings: everything but the task graph.
  StepPlan describe();
  StepPlan build();

 private:
  // megatron_builder.cpp
  void check_memory(const std::vector<MemoryBreakdown>& memory);
  std::vector<std::pair<std::string, std::string>> settings() const;
  std::vector<std::pair<std::string, std::string>> settings_list() const;
  std::string description() const;
  std::vector<std::string> notes() const;
  // nvlink_domain_hints.cpp: TP, CP and EP groups that straddle two NVLink domains though they would fit one.
  std::vector<std::string> nvlink_domain_hints() const;

  // megatron_layers.cpp
  // Compute that runs while a transfer is in flight (ring attention's KV blocks, TP collectives under
  // tp_overlap): the pass is done when both are.
  struct Overlap {
    double seconds = 0;  // device time that hides the transfer
    int plan = -1;
    Category category = Category::tp;
    bool slowed = true;   // by overlap_compute_slowdown (false: the GEMM's cost already has the SMs lost)
    double slowdown = 0;  // while the transfer runs; 0: the device profile's overlap_compute_slowdown
  };
  struct ChunkWork {
    double seconds = 0;             // device time run serially, followed by `plan`
    int plan = -1;                  // the serial tensor-parallel collectives, merged
    int cp_plan = -1;               // serial context-parallel collectives (all_gather variant)
    int ep_plan = -1;               // serial expert-parallel dispatch / combine (moe_step.cpp)
    std::vector<Overlap> overlaps;  // after the serial part, one after the other
    double moe_host_stall = 0;      // host floor per MoE layer that `seconds` holds (moe.host_*)
  };
  // The tensor-parallel collectives of one pass over `layers` layers as one merged phase.
  int tp_plan(int stage, const std::vector<TpCollective>& per_layer, double layers,
              const std::vector<TpCollective>& extra);
  // Cost of the forward or backward of model chunk `chunk` of stage `stage` for one microbatch.
  ChunkWork chunk_work(int stage, int chunk, Pass pass);
  // The task(s) of one compute step of the schedule on stage `s`'s compute stream.
  void add_chunk_pass(int s, const StageStep& step, bool final_backward);
  // The chunk's TP collectives of one layer pass: serial ones into `serial`, overlapped ones (tp_overlap)
  // into `work.overlaps` with the GEMM time they hide behind taken out of `work.seconds`.
  void split_tp_overlap(int stage, const PassCost& pass, double layers, std::vector<TpCollective>& serial,
                        ChunkWork& work);

  // megatron_overlap.cpp
  // Context-parallel communication of one chunk pass over `layers` layers (ring: overlaps; all_gather:
  // the serial cp_plan).
  void add_context_parallel(int stage, Pass pass, double layers, ChunkWork& work);
  // Ring attention: every rank of every CP ring sends `bytes` to the next one, `steps` times, as one plan.
  int cp_ring_plan(int stage, double bytes, double steps);
  // Collectives over the CP groups (all data-parallel replicas, rank 0's rail), each repeated `layers` times.
  int cp_collective_plan(int stage, const std::vector<TpCollective>& per_layer, double layers);
  // `work` (1/`pieces` of it) as tasks: the serial part on the compute stream, then each overlap as a
  // compute task there and a comm task on the stage's overlap stream starting together; the compute
  // stream goes on when both are done.
  // `seconds` (>= 0) replaces the serial part's time of the piece (e.g. slowed by overlapped
  // communication); `deps` are extra dependencies of its first task. Returns the serial part's task.
  int add_work(int s, const StageStep& step, const ChunkWork& work, int pieces, double seconds = -1,
               const std::vector<int>& deps = {});
  int piece_plan(int plan, int pieces);
  bool tp_overlap_ = false;  // parallel.tp_overlap in effect (sequence parallel, tp > 1, device supports it)

  // Gradient buckets of `bytes` (parallel.dp_bucket_MB), at least 1 and at most 64.
  int bucket_count(double params, double bytes_per_param) const;  // of one chunk's gradients / gathers

  // megatron_sharding.cpp
  // Time of plan `plan` (-1: none, 0 s) on an idle network, cached.
  double idle_seconds(int plan);
  // `compute` seconds of device time stretched by `slowdown` (0: the device's overlap_compute_slowdown) for
  // the `comm` seconds communication kernels run beside it.
  double overlapped_seconds(double compute, double comm, double slowdown = 0) const;
  // ZeRO-3 / FSDP: one pass of a chunk with its parameter gathers (and, backward, gradient
  // reduce-scatters); a backward that keeps the forward's gathers (reshard_after_forward: false) only
  // reduce-scatters.
  void add_fsdp_pass(int s, const StageStep& step);
  // A chunk's FSDP units: `layers` layers of `unit` dense parameters, the embedding / output layer's
  // `heads`, and `moe_layers` MoE layers whose routed experts (`expert_unit` each) shard apart.
  struct FsdpUnits {
    double layers = 0, unit = 0, heads = 0, moe_layers = 0, expert_unit = 0;
  };
  FsdpUnits fsdp_units(int s, int chunk) const;
  // Dependencies that start a task when stage `s`'s compute stream has done its last task (none if empty).
  std::vector<int> after_compute(int s) const;
  // ZeRO-2: a backward of a chunk and the reduce-scatter of the gradients it produced (every microbatch).
  void add_zero2_backward(int s, const StageStep& step, const ChunkWork& work);
  // ZeRO 1/2 with dp_overlap: the first forward of a chunk in buckets, each waiting for its part of the
  // previous step's parameter all-gather (Megatron's overlap_param_gather).
  void add_gathered_forward(int s, const StageStep& step);
  bool overlaps_param_gather(const StageStep& step) const;

  // moe_step.cpp: mixture-of-experts layers (w_.moe enabled)
  // A chunk pass of a model with MoE layers: its dense and MoE layers, the TP collectives of each, the
  // expert-parallel dispatch and combine (serial, or beside the shared experts with moe.overlap).
  ChunkWork moe_chunk_work(int stage, int chunk, Pass pass);
  long long moe_layers_in_chunk(int stage, int chunk) const;
  // Sliding-window layers of a chunk (model.sliding_window), each window_ seconds faster than layer_.
  double windowed_layers_in_chunk(int stage, int chunk) const;
  // Device time one MoE block's pass waits for the host (moe.host_forward_us / host_backward_us) beyond
  // the `block_seconds` of its kernels and the `dispatch_seconds` of its dispatch and combine.
  static double host_stall(double host, double block_seconds, double dispatch_seconds);
  // Ranks of stage `s` in Megatron-Core's expert layout etp -> ep -> edp (moe_config.hpp).
  std::vector<std::vector<int>> expert_groups(int s, ExpertGroups which) const;
  // One MoE layer's dispatch and combine on stage `stage`, unscaled (expert_phases.hpp), cached.
  const ExpertPhases& ep_phases(int stage);
  // Dispatch and combine of `layers` MoE layers, `pairs` times each (forward 1, backward 1, +1 recompute).
  int ep_plan(int stage, double layers, double pairs);
  // The dispatches (or the combines) alone of `layers` MoE layers; -1 when there are none.
  int ep_half_plan(int stage, double layers, bool dispatch);
  int ep_phase_plan(int stage, double count, int which);  // both, cached (combined 1F1B asks per pair)
  // Slowdown of the compute beside the dispatch and combine (moe.overlap): the flex dispatcher's kernels
  // hold moe.dispatcher_sms of the device's SMs; 0 for the NCCL dispatchers (the profile's).
  double ep_overlap_slowdown() const;

  // moe_combined_1f1b.cpp: moe.overlap combined_1f1b
  bool combined_1f1b_ = false;  // the schedule pairs steady-state forwards with backwards
  // The forward step waiting for the backward it is combined with, per stage.
  std::vector<std::optional<StageStep>> paired_forward_;
  // Forward `f` (of chunk `f_chunk`) and backward `b` (of `b_chunk`) of one combined step: the paired MoE
  // layers' dispatches and combines leave the serial parts and run beside the other pass's compute.
  void pair_passes(int s, int f_chunk, int b_chunk, ChunkWork& f, ChunkWork& b);
  // Expert gradients (expert_params x grad bytes per rank) reduced over the expert data-parallel groups,
  // and the sharded experts' parameter gather after the optimizer.
  int expert_dp_plan(int s, double bytes, network::CollectiveKind kind);
  void add_expert_reduction(int s, int chunk_or_stage, bool whole_stage, const std::vector<int>& deps);
  std::optional<MoeLayerCosts> moe_;
  std::string moe_note() const;

  // megatron_pipeline.cpp
  void build_pipeline();
  // Flows of one pipeline transfer from stage `from` to stage `to`, for every data-parallel replica.
  int transfer_plan(int from, int to);
  int gather_plan(int stage);

  // megatron_gradients.cpp
  // THE lookup of the ranks whose gradients are reduced (and ZeRO state sharded) together with TP rank
  // `tp_rank` of stage `s`; every data-parallel collective is built from it.
  std::vector<int> grad_group(int tp_rank, int s) const;
  // Ranks of one ZeRO shard group in that list (parallel.shard_group, HSDP; the whole list without it).
  int shard_size() const;
  // Ranks holding the same weights as one rank: dp x cp.
  int grad_ranks() const { return layout_.dp * layout_.cp; }
  // `kind` of `bytes` (nccl-tests sizes) over every shard group of every rail rank at once.
  plan::CommPlan shard_collective(int s, network::CollectiveKind kind, double bytes) const;
  // HSDP: all-reduce of `bytes` per rank among the ranks holding the same shard; empty without HSDP.
  plan::CommPlan replica_all_reduce(int s, double bytes) const;
  // Gradient reduction of `bytes` per rank: all-reduce (zero 0), or reduce-scatter in the shard groups
  // and, with HSDP, the shard all-reduced across groups.
  int dp_plan(int s, double bytes);
  // All-gather of `bytes` of parameters in the shard groups (-1 when nothing is sharded).
  int param_gather_plan(int s, double bytes);
  bool gathers_after_optimizer() const;
  void build_gradient_sync_and_optimizer();
  std::vector<int> reduce_gradients();
  int sync_embeddings(const std::vector<int>& grads_ready);
  void add_optimizer_steps(int sync_id);

  const topology::Topology& topo_;
  const WorkloadConfig& w_;
  int mb_, v_, p_ = 1, m_ = 1;
  ParallelLayout layout_;
  std::vector<int> rail_ranks_;
  std::optional<calibration::ComputeModel> cm_;
  LayerCosts layer_;
  WindowSaving window_;  // what a sliding-window layer saves against layer_ (zero without a window)
  HeadCosts head_;
  std::vector<StageProgram> programs_;
  TaskGraph g_;
  std::vector<int> compute_stream_, dp_stream_, gather_stream_, overlap_stream_, flush_done_;
  std::map<std::pair<int, int>, int> piece_cache_;
  std::map<std::tuple<int, int, bool>, ChunkWork> chunk_cache_;
  std::map<std::pair<int, int>, int> transfer_cache_;
  std::map<int, int> gather_cache_;
  std::map<int, double> idle_time_cache_;        // plan id -> its time on an idle network
  std::map<int, ExpertPhases> ep_phases_cache_;  // stage -> its routed dispatch and combine
  // (stage, layers x pairs, 0 both / 1 dispatches / 2 combines) -> plan id: combined 1F1B asks per pair
  std::map<std::tuple<int, double, int>, int> ep_plan_cache_;
};

}  // namespace podsim::workload::megatron
