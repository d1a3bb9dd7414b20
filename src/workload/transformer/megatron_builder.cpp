#include "podsim/workload/transformer/megatron_builder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <optional>
#include <tuple>

#include "podsim/calibration/compute_model.hpp"
#include "podsim/core/config_node.hpp"
#include "podsim/core/error.hpp"
#include "podsim/network/collective.hpp"
#include "podsim/workload/pipeline_assembly.hpp"
#include "podsim/workload/pipeline_schedule.hpp"
#include "podsim/workload/transformer/transformer_loader.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"

namespace podsim::workload {
namespace {

using network::Collective;
using network::CollectiveKind;
using plan::CommPlan;

constexpr char kForward = 'F', kBackward = 'B', kCallDone = 'C', kDataParallel = 'D', kEmbeddingSync = 'E',
               kSync = 'S', kOptimizer = 'O';

class Builder {
 public:
  Builder(const topology::Topology& topo, const WorkloadConfig& w, int micro_batch, int virtual_stages)
      : topo_(topo), w_(w), mb_(micro_batch), v_(virtual_stages) {
    layout_ = ParallelLayout{w.parallel.tp, w.parallel.pp, w.parallel.dp};
    p_ = w.parallel.pp;
    m_ = static_cast<int>(w.training.global_batch / (static_cast<long long>(w.parallel.dp) * micro_batch));
    // Every layer is simulated: the stages' chunks hold all of them, and only the interleaved schedule
    // runs more than one chunk per stage (build_schedule refuses chunks otherwise).
    if (v_ < 1 || w.model.layers % (static_cast<long long>(p_) * v_))
      throw std::logic_error(fmt::format("megatron builder: {} layers do not split into pp {} x {} chunks",
                                         w.model.layers, p_, v_));
    if (v_ > 1 && (p_ == 1 || w.parallel.schedule != Schedule::interleaved))
      throw std::logic_error(fmt::format("megatron builder: {} virtual stages with schedule {} (pp {})", v_,
                                         to_string(w.parallel.schedule), p_));
    layers_per_chunk_ = static_cast<int>(w.model.layers / (p_ * v_));
    // TP ranks whose traffic shares rank 0's NIC (one on a DGX A100, two on a DGX-2H) are not folded.
    for (int peer : topo.rail_peers(layout_.device(0, 0, 0)))
      if (peer < layout_.tp) rail_ranks_.push_back(peer);
    if (rail_ranks_.empty()) rail_ranks_ = {0};
  }

  // Costs, memory and settings: everything but the task graph.
  StepPlan describe() {
    StepPlan plan;
    plan.workload_kind = "transformer_lm";
    plan.devices = layout_.devices();
    plan.tokens_per_step = static_cast<double>(w_.training.global_batch) * w_.model.seq_len;
    plan.samples_per_step = static_cast<double>(w_.training.global_batch);
    calibration::DeviceRates rates;
    rates.peak_flops = topo_.device.peak(w_.training.precision);
    rates.hbm_bandwidth = topo_.device.hbm_bandwidth;
    rates.sm_count = topo_.device.sm_count;
    rates.element_bytes = element_bytes(w_.training.precision);
    cm_.emplace(topo_.device_profile, rates);
    plan.peak_flops = rates.peak_flops;
    layer_ = layer_costs(w_, mb_, *cm_);
    head_ = head_costs(w_, mb_, *cm_);
    programs_ = build_schedule(p_ == 1 ? Schedule::none : w_.parallel.schedule, p_, m_, v_);
    plan.memory = stage_memory(w_, mb_, v_, peak_in_flight(programs_), topo_.device_profile);
    plan.hardware_flops =
        hardware_flops(w_.model, static_cast<double>(w_.training.global_batch), w_.training.recompute);
    plan.model_flops = model_flops(w_.model, static_cast<double>(w_.training.global_batch));
    plan.settings = settings();
    plan.description = description();
    plan.notes = notes();
    append_kernels(plan.kernels, "layer forward", layer_.forward);
    append_kernels(plan.kernels, "layer recompute", layer_.recompute);
    append_kernels(plan.kernels, "layer backward", layer_.backward);
    append_kernels(plan.kernels, "embedding forward", head_.embedding_forward);
    append_kernels(plan.kernels, "embedding backward", head_.embedding_backward);
    append_kernels(plan.kernels, "output layer forward", head_.output_forward);
    append_kernels(plan.kernels, "output layer backward", head_.output_backward);
    for (int s = 0; s < p_; ++s) plan.graph.lane_names.push_back(fmt::format("stage {}", s));
    return plan;
  }

  StepPlan build() {
    // Refuse, before any work, graphs too large to replay in reasonable memory (~350 bytes per task).
    constexpr double kMaxTasks = 5e6;
    double estimate = 6.0 * p_ * m_ * v_;
    if (estimate > kMaxTasks)
      throw InputError(fmt::format(
          "{}: this step would simulate about {:.3g} tasks ({} stages x {} microbatches x {} virtual "
          "stages), more than podsim's limit of {:.0e}; use a larger training.micro_batch or a "
          "smaller training.global_batch",
          w_.file, estimate, p_, m_, v_, kMaxTasks));
    StepPlan plan = describe();
    check_memory(plan.memory);
    g_.stages = p_;
    g_.lane_names = plan.graph.lane_names;
    for (int s = 0; s < p_; ++s) {
      int rep = layout_.device(0, 0, s);
      g_.stage_devices.push_back(rep);
      compute_stream_.push_back(g_.add_stream(fmt::format("stage {} compute", s), s, rep));
      dp_stream_.push_back(g_.add_stream(fmt::format("stage {} data-parallel", s), s, rep, false));
    }
    build_pipeline();
    build_gradient_sync_and_optimizer();
    plan.graph = std::move(g_);
    return plan;
  }

 private:
  // ---- helpers -------------------------------------------------------------------------------------

  void check_memory(const std::vector<MemoryBreakdown>& memory) {
    constexpr double GiB = 1073741824.0;
    for (size_t s = 0; s < memory.size(); ++s) {
      const MemoryBreakdown& m = memory[s];
      if (m.total() <= topo_.device.hbm_bytes) continue;
      // Suggest only what is not already in use.
      std::vector<std::string> ideas = {"more pipeline or tensor parallelism"};
      if (w_.training.recompute != Recompute::full) ideas.push_back("training.recompute: full");
      if (mb_ > 1) ideas.push_back("a smaller training.micro_batch");
      if (w_.parallel.zero < 1 && layout_.dp > 1) ideas.push_back("parallel.zero: 1");
      if (!w_.parallel.sequence_parallel && layout_.tp > 1)
        ideas.push_back("parallel.sequence_parallel: true");
      std::string hint;
      for (size_t i = 0; i < ideas.size(); ++i)
        hint += (i == 0 ? "" : i + 1 == ideas.size() ? " or " : ", ") + ideas[i];
      throw InfeasibleConfig(
          "out_of_memory",
          fmt::format(
              "stage {} needs {:.1f} GiB per device (weights {:.1f}, gradients {:.1f}, optimizer {:.1f}, "
              "activations {:.1f}, buffers {:.1f}, framework {:.1f}) but a {} has {:.0f} GiB; try {}",
              s, m.total() / GiB, m.weights / GiB, m.gradients / GiB, m.optimizer / GiB, m.activations / GiB,
              m.buffers / GiB, m.framework / GiB, topo_.device.name, topo_.device.hbm_bytes / GiB, hint));
    }
  }

  std::vector<std::pair<std::string, std::string>> settings() const {
    const auto& c = w_;
    return {{"model_params_billion", fmt::format("{:.5g}", total_params(c.model) / 1e9)},
            {"tp", std::to_string(layout_.tp)},
            {"pp", std::to_string(layout_.pp)},
            {"dp", std::to_string(layout_.dp)},
            {"schedule", p_ > 1 ? to_string(c.parallel.schedule) : "none"},
            {"virtual_stages", std::to_string(v_)},
            {"micro_batch", std::to_string(mb_)},
            {"global_batch", std::to_string(c.training.global_batch)},
            {"microbatches", std::to_string(m_)},
            {"recompute", to_string(c.training.recompute)},
            {"sequence_parallel", c.parallel.sequence_parallel ? "true" : "false"},
            {"zero", std::to_string(c.parallel.zero)},
            {"precision", topology::to_string(c.training.precision)}};
  }

  std::string description() const {
    std::string schedule = p_ == 1 ? "no pipeline"
                           : w_.parallel.schedule == Schedule::interleaved && v_ > 1
                               ? fmt::format("interleaved 1F1B, {} virtual stages", v_)
                           : w_.parallel.schedule == Schedule::gpipe ? "GPipe"
                                                                     : "1F1B";
    return fmt::format("tp {} x pp {} x dp {}, {}, micro-batch {} ({} per step), recompute {}{}{}",
                       layout_.tp, layout_.pp, layout_.dp, schedule, mb_, m_,
                       to_string(w_.training.recompute),
                       w_.parallel.sequence_parallel ? ", sequence parallel" : "",
                       w_.parallel.zero ? fmt::format(", ZeRO-{}", w_.parallel.zero) : "");
  }

  std::vector<std::string> notes() const {
    std::vector<std::string> n;
    n.push_back(fmt::format(
        "folded: {} data-parallel replicas and {} tensor-parallel ranks per stage share the compute "
        "of one representative; their traffic is on the network",
        layout_.dp, layout_.tp));
    if (w_.parallel.sequence_parallel)
      n.push_back(
          "sequence parallelism: backward all-gathers that Megatron overlaps with weight-gradient GEMMs are "
          "not modelled");
    n.push_back(
        "not modelled: compute slowdown from concurrent communication kernels, data loading, CPU launch "
        "stalls");
    return n;
  }

  // The tensor-parallel collectives of one pass over `layers` layers as one merged phase.
  int tp_plan(int stage, const std::vector<TpCollective>& per_layer, double layers,
              const std::vector<TpCollective>& extra) {
    if (layout_.tp == 1) return -1;
    std::vector<CommPlan> plans;
    auto group = layout_.tp_group(0, stage);
    for (const auto& c : per_layer)
      plans.push_back(network::scaled(
          network::plan_collective(topo_, network::make_collective(c.kind, group, c.bytes)), layers));
    for (const auto& c : extra)
      plans.push_back(network::plan_collective(topo_, network::make_collective(c.kind, group, c.bytes)));
    CommPlan merged{network::serial_merge(plans)};
    if (merged[0].flows.empty()) return -1;
    return g_.add_plan(std::move(merged));
  }

  struct ChunkWork {
    double seconds = 0;
    int plan = -1;
  };

  // Cost of the forward or backward of model chunk `chunk` of stage `stage` for one microbatch.
  ChunkWork chunk_work(int stage, int chunk, Pass pass) {
    auto key = std::make_tuple(stage, chunk, pass == Pass::forward);
    auto it = chunk_cache_.find(key);
    if (it != chunk_cache_.end()) return it->second;
    bool has_embedding = stage == 0 && chunk == 0;
    bool has_output = stage == p_ - 1 && chunk == v_ - 1;
    double L = layers_per_chunk_;
    ChunkWork work;
    std::vector<TpCollective> per_layer, extra;
    if (pass == Pass::forward) {
      work.seconds = L * layer_.forward.seconds;
      per_layer = layer_.forward.tp;
      if (has_embedding)
        work.seconds += head_.embedding_forward.seconds, append(extra, head_.embedding_forward.tp);
      if (has_output) work.seconds += head_.output_forward.seconds, append(extra, head_.output_forward.tp);
    } else {
      work.seconds = L * (layer_.recompute.seconds + layer_.backward.seconds);
      per_layer = layer_.recompute.tp;
      append(per_layer, layer_.backward.tp);
      if (has_output) work.seconds += head_.output_backward.seconds, append(extra, head_.output_backward.tp);
      if (has_embedding)
        work.seconds += head_.embedding_backward.seconds, append(extra, head_.embedding_backward.tp);
    }
    work.plan = tp_plan(stage, per_layer, L, extra);
    chunk_cache_[key] = work;
    return work;
  }

  static void append(std::vector<TpCollective>& to, const std::vector<TpCollective>& from) {
    to.insert(to.end(), from.begin(), from.end());
  }

  double activation_bytes() const {
    return static_cast<double>(mb_) * w_.model.seq_len * w_.model.hidden *
           element_bytes(w_.training.precision);
  }

  // Flows of one pipeline transfer from stage `from` to stage `to`, for every data-parallel replica.
  int transfer_plan(int from, int to) {
    auto key = std::make_pair(from, to);
    auto it = transfer_cache_.find(key);
    if (it != transfer_cache_.end()) return it->second;
    bool split = layout_.tp > 1 && (w_.parallel.scatter_gather || w_.parallel.sequence_parallel);
    double bytes = split ? activation_bytes() / layout_.tp : activation_bytes();
    plan::CommPhase phase;
    for (int replica = 0; replica < layout_.dp; ++replica)
      for (int r : rail_ranks_)
        phase.flows.push_back({layout_.device(r, replica, from), layout_.device(r, replica, to), bytes});
    phase.latency = topo_.fabric_profile.launch_latency +
                    network::step_latency(topo_, layout_.device(0, 0, from), layout_.device(0, 0, to));
    int id = g_.add_plan({phase});
    transfer_cache_[key] = id;
    return id;
  }

  // Scatter/gather: the receiving stage all-gathers the slices over its TP group (not with sequence
  // parallelism, where the next stage consumes the sharded tensor directly).
  int gather_plan(int stage) {
    if (layout_.tp == 1 || !w_.parallel.scatter_gather || w_.parallel.sequence_parallel) return -1;
    auto it = gather_cache_.find(stage);
    if (it != gather_cache_.end()) return it->second;
    int id = g_.add_plan(network::plan_collective(
        topo_, network::make_collective(CollectiveKind::all_gather, layout_.tp_group(0, stage),
                                        activation_bytes())));
    gather_cache_[stage] = id;
    return id;
  }

  // ---- the pipeline ---------------------------------------------------------------------------------

  void build_pipeline() {
    PipelineCallbacks cb;
    cb.compute = [this](int s, const StageStep& step, bool final_backward) {
      add_compute(s, step, final_backward);
    };
    cb.transfer_plan = [this](int from, int to) { return transfer_plan(from, to); };
    cb.gather_plan = [this](int to) { return gather_plan(to); };
    flush_done_ = assemble_pipeline(g_, programs_, compute_stream_, cb);
  }

  void add_compute(int s, const StageStep& step, bool final_backward) {
    ChunkWork work = chunk_work(s, step.chunk, step.pass);
    bool overlap_dp = final_backward && layout_.dp > 1 && w_.parallel.dp_overlap;
    if (!overlap_dp) {
      Task t;
      t.stream = compute_stream_[s];
      t.stage = s;
      t.kind = step.pass == Pass::forward ? kForward : kBackward;
      t.microbatch = step.microbatch;
      t.chunk = step.chunk;
      t.compute_seconds = work.seconds;
      t.plan = work.plan;
      t.comm_category = Category::tp;
      g_.add_task(std::move(t));
      return;
    }
    // Final backward of a chunk with overlapped gradient reduction: split it into one piece per
    // gradient bucket; each bucket's reduction starts when its piece is done (buckets fill from the last
    // layer to the first, as in PyTorch DDP and Megatron's overlapped reduction).
    double grads = chunk_params(s, step.chunk) * w_.training.grad_reduce_bytes;
    // Clamped as a double before the cast: a tiny bucket size must not overflow the count. Finer than 64
    // buckets changes nothing visible but costs simulation time.
    double wanted = std::ceil(grads / w_.parallel.dp_bucket_bytes);
    int buckets = static_cast<int>(std::clamp(wanted, 1.0, 64.0));
    int piece_plan = work.plan >= 0 ? g_.add_plan(network::scaled(g_.plans[work.plan], 1.0 / buckets)) : -1;
    int bucket_plan = dp_plan(s, grads / buckets);
    for (int b = 0; b < buckets; ++b) {
      Task t;
      t.stream = compute_stream_[s];
      t.stage = s;
      t.kind = kBackward;
      t.microbatch = step.microbatch;
      t.chunk = step.chunk;
      t.compute_seconds = work.seconds / buckets;
      t.plan = piece_plan;
      t.comm_category = Category::tp;
      int piece = g_.add_task(std::move(t));
      Task d;
      d.stream = dp_stream_[s];
      d.stage = s;
      d.kind = kDataParallel;
      d.plan = bucket_plan;
      d.comm_category = Category::dp;
      d.deps.push_back(piece);
      g_.add_task(std::move(d));
    }
  }

  double chunk_params(int s, int chunk) const {
    double params = layers_per_chunk_ * layer_params(w_.model) / layout_.tp;
    double stage_extra = stage_params(w_, s) - (w_.model.layers / p_) * layer_params(w_.model) / layout_.tp;
    if ((s == 0 && chunk == 0) || (s == p_ - 1 && chunk == v_ - 1)) params += stage_extra;
    return params;
  }

  // Gradient reduction of `bytes` per rank over the stage's data-parallel groups on rank 0's rail.
  int dp_plan(int s, double bytes) {
    if (layout_.dp == 1) return -1;
    std::vector<CommPlan> plans;
    CollectiveKind kind = w_.parallel.zero >= 1 ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce;
    for (int r : rail_ranks_) {
      Collective c = network::make_collective(kind, layout_.dp_group(r, s), bytes);
      c.algorithm = network::parse_algorithm(w_.parallel.dp_algorithm);
      plans.push_back(network::plan_collective(topo_, c));
    }
    return g_.add_plan(network::concurrent(plans));
  }

  // ---- after the pipeline: gradients, embedding sync, optimizer --------------------------------------

  void build_gradient_sync_and_optimizer() {
    std::vector<int> grads_ready(p_);
    for (int s = 0; s < p_; ++s) {
      if (layout_.dp > 1 && !w_.parallel.dp_overlap) {
        double grads = stage_params(w_, s) * w_.training.grad_reduce_bytes;
        Task d;
        d.stream = dp_stream_[s];
        d.stage = s;
        d.kind = kDataParallel;
        d.plan = dp_plan(s, grads);
        d.comm_category = Category::dp;
        d.deps.push_back(flush_done_[s]);
        g_.add_task(std::move(d));
      }
      // Gradients are ready when the pipeline is flushed and the stage's reductions are done.
      Task ready;
      ready.stream = dp_stream_[s];
      ready.stage = s;
      ready.kind = kCallDone;
      ready.deps.push_back(flush_done_[s]);
      grads_ready[s] = g_.add_task(std::move(ready));
    }
    std::vector<int> before_optimizer = grads_ready;
    if (p_ > 1) {  // tied word embeddings: first and last stage all-reduce their embedding gradients
      std::vector<CommPlan> plans;
      double bytes =
          static_cast<double>(w_.model.vocab) * w_.model.hidden / layout_.tp * w_.training.grad_reduce_bytes;
      for (int replica = 0; replica < layout_.dp; ++replica)
        for (int r : rail_ranks_)
          plans.push_back(network::plan_collective(
              topo_, network::make_collective(
                         CollectiveKind::all_reduce,
                         {layout_.device(r, replica, 0), layout_.device(r, replica, p_ - 1)}, bytes)));
      Task e;
      e.stage = 0;
      e.peer_stage = p_ - 1;
      e.kind = kEmbeddingSync;
      e.plan = g_.add_plan(network::concurrent(plans));
      e.comm_category = Category::dp;
      e.deps = {grads_ready[0], grads_ready[p_ - 1]};
      int id = g_.add_task(std::move(e));
      before_optimizer[0] = before_optimizer[p_ - 1] = id;
    }
    // Gradient clipping and the fp16 overflow check all-reduce small values over the model-parallel
    // group, which makes every stage wait for the slowest before its optimizer step.
    std::vector<int> stage_reps;
    for (int s = 0; s < p_; ++s)
      for (int t = 0; t < layout_.tp; ++t) stage_reps.push_back(layout_.device(t, 0, s));
    Task sync;
    sync.stage = -1;
    sync.kind = kSync;
    sync.plan = g_.add_plan(
        network::plan_collective(topo_, network::make_collective(CollectiveKind::all_reduce, stage_reps, 8)));
    sync.comm_category = Category::optimizer;
    sync.deps = before_optimizer;
    int sync_id = g_.add_task(std::move(sync));
    for (int s = 0; s < p_; ++s) {
      double params = stage_params(w_, s) / (w_.parallel.zero >= 1 ? layout_.dp : 1);
      Task opt;
      opt.stream = compute_stream_[s];
      opt.stage = s;
      opt.kind = kOptimizer;
      opt.compute_seconds = optimizer_cost(params, *cm_).seconds;
      opt.compute_category = Category::optimizer;
      opt.deps.push_back(sync_id);
      int opt_id = g_.add_task(std::move(opt));
      if (w_.parallel.zero >= 1 && layout_.dp > 1) {  // sharded optimizer: gather the updated parameters
        std::vector<CommPlan> plans;
        double bytes = stage_params(w_, s) * element_bytes(w_.training.precision);
        for (int r : rail_ranks_)
          plans.push_back(network::plan_collective(
              topo_, network::make_collective(CollectiveKind::all_gather, layout_.dp_group(r, s), bytes)));
        Task ag;
        ag.stream = dp_stream_[s];
        ag.stage = s;
        ag.kind = kDataParallel;
        ag.plan = g_.add_plan(network::concurrent(plans));
        ag.comm_category = Category::dp;
        ag.deps.push_back(opt_id);
        g_.add_task(std::move(ag));
      }
    }
  }

  const topology::Topology& topo_;
  const WorkloadConfig& w_;
  int mb_, v_, p_ = 1, m_ = 1, layers_per_chunk_ = 1;
  ParallelLayout layout_;
  std::vector<int> rail_ranks_;
  std::optional<calibration::ComputeModel> cm_;
  LayerCosts layer_;
  HeadCosts head_;
  std::vector<StageProgram> programs_;
  TaskGraph g_;
  std::vector<int> compute_stream_, dp_stream_, flush_done_;
  std::map<std::tuple<int, int, bool>, ChunkWork> chunk_cache_;
  std::map<std::pair<int, int>, int> transfer_cache_;
  std::map<int, int> gather_cache_;
};

}  // namespace

StepPlan build_megatron_step(const topology::Topology& topo, const WorkloadConfig& w, int micro_batch,
                             int virtual_stages) {
  return Builder(topo, w, micro_batch, virtual_stages).build();
}

StepPlan describe_megatron_step(const topology::Topology& topo, const WorkloadConfig& w, int micro_batch,
                                int virtual_stages) {
  return Builder(topo, w, micro_batch, virtual_stages).describe();
}

namespace {

class MegatronModel final : public WorkloadModel {
 public:
  MegatronModel(WorkloadConfig w, const topology::Topology& topo)
      : w_(std::move(w)), topo_(topo), settings_(candidate_settings(w_)) {
    if (settings_.empty())
      throw InputError(
          fmt::format("{}: no micro_batch / virtual_stages setting satisfies the divisibility rules of this "
                      "workload; set them explicitly to see which rule fails",
                      w_.file));
  }
  std::string name() const override { return w_.name; }
  std::string kind() const override { return "transformer_lm"; }
  int devices() const override { return w_.parallel.tp * w_.parallel.pp * w_.parallel.dp; }
  std::vector<std::string> candidates() const override {
    std::vector<std::string> out;
    for (auto [mb, v] : settings_) out.push_back(fmt::format("micro_batch={} virtual_stages={}", mb, v));
    return out;
  }
  StepPlan build(size_t i) const override {
    return build_megatron_step(topo_, w_, settings_.at(i).first, settings_.at(i).second);
  }
  StepPlan describe_infeasible(size_t i) const override {
    return describe_megatron_step(topo_, w_, settings_.at(i).first, settings_.at(i).second);
  }

 private:
  WorkloadConfig w_;
  const topology::Topology& topo_;
  std::vector<std::pair<int, int>> settings_;
};

}  // namespace

std::unique_ptr<WorkloadModel> make_megatron_model(const ConfigNode& root, const std::string& file,
                                                   const topology::Topology& topo) {
  WorkloadConfig w = read_transformer_workload(root, topo.compute_device_count(), topo.devices_per_node);
  check_precision_on_device(root.child("training"), w.training.precision, topo.device, topo.source_file);
  w.kind = "transformer_lm";
  w.file = file;
  return std::make_unique<MegatronModel>(std::move(w), topo);
}

}  // namespace podsim::workload
