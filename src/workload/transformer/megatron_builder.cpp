#include "podsim/workload/transformer/megatron_builder.hpp"

#include <fmt/format.h>

#include "megatron_step_builder.hpp"
#include "podsim/core/config_node.hpp"
#include "podsim/core/error.hpp"
#include "podsim/core/units.hpp"
#include "podsim/workload/transformer/memory_model.hpp"
#include "podsim/workload/transformer/moe_math.hpp"
#include "podsim/workload/transformer/optimizer_state.hpp"
#include "podsim/workload/transformer/precision_bytes.hpp"
#include "podsim/workload/transformer/transformer_loader.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"

namespace podsim::workload::megatron {
StepBuilder::StepBuilder(const topology::Topology& topo, const WorkloadConfig& w, int micro_batch,
                         int virtual_stages)
    : topo_(topo), w_(w), mb_(micro_batch), v_(virtual_stages) {
  layout_ = rank_layout(w.parallel);
  tp_overlap_ = tp_overlap_in_effect(w.parallel, topo.device);
  p_ = w.parallel.pp;
  m_ = static_cast<int>(w.training.global_batch / (static_cast<long long>(w.parallel.dp) * micro_batch));
  // Every layer is simulated: the stages' chunks hold all of them, and only the interleaved schedule
  // runs more than one chunk per stage (build_schedule refuses chunks otherwise).
  if (!splits_evenly(w, v_))
    throw std::logic_error(fmt::format("megatron builder: {} layer slots do not split into pp {} x {} chunks",
                                       pipeline_slots(w), p_, v_));
  if (v_ > 1 && (p_ == 1 || w.parallel.schedule != Schedule::interleaved))
    throw std::logic_error(fmt::format("megatron builder: {} virtual stages with schedule {} (pp {})", v_,
                                       to_string(w.parallel.schedule), p_));
  combined_1f1b_ = w.moe.enabled() && w.moe.overlap == MoeOverlap::combined_1f1b;
  if (combined_1f1b_ && p_ > 1 && v_ < 2)
    throw InputError(
        fmt::format("{}: moe.overlap: combined_1f1b with pp {} needs virtual_stages >= 2 (Megatron-"
                    "Core requires virtual pipeline stages for it when pipelined); virtual_stages "
                    "is {}",
                    w.file, p_, v_));
  rail_ranks_ = simulated_tp_ranks(topo, layout_);
}

StepPlan StepBuilder::describe() {
  StepPlan plan;
  plan.workload_kind = "transformer_lm";
  plan.devices = layout_.devices();
  plan.tokens_per_step = static_cast<double>(w_.training.global_batch) * w_.model.seq_len;
  plan.samples_per_step = static_cast<double>(w_.training.global_batch);
  plan.rank_layout = layout_;
  // Expert layers fold the tp x cp x dp ranks of a stage as etp -> ep -> edp: an EP group wider than tp x cp
  // spans replicas that wait for each other at every dispatch and combine.
  if (w_.moe.enabled())
    plan.lockstep_replicas = std::max(1, w_.parallel.ep * w_.parallel.etp / (layout_.tp * layout_.cp));
  // A Megatron checkpoint: weights (bf16 under the 16-bit and fp8 formats) + the optimizer's main weights and
  // Adam m and v in their precisions (remainders are saved as such: distrib_optimizer.py's int16
  // master_param).
  plan.model_state_bytes = moe_total_params(w_) * (workload::activation_bytes(w_.training) +
                                                   optimizer_state_bytes(w_.training.optimizer));
  calibration::DeviceRates rates = device_rates(topo_.device, w_.training.precision);
  cm_.emplace(calibration::with_attention_library(topo_.device_profile, w_.training.attention_library),
              rates);
  plan.peak_flops = rates.peak_flops;
  WorkloadConfig costed = w_;  // the kernels as they run: no userbuffers where the device has none
  costed.parallel.tp_overlap = tp_overlap_;
  layer_ = layer_costs(costed, mb_, *cm_);
  window_ = sliding_window_saving(costed, mb_, *cm_, layer_);
  head_ = head_costs(costed, mb_, *cm_);
  if (w_.moe.enabled()) moe_ = moe_layer_costs(costed, mb_, *cm_, layer_);
  programs_ = build_schedule(p_ == 1 ? Schedule::none : w_.parallel.schedule, p_, m_, v_, combined_1f1b_,
                             {w_.parallel.overlap_p2p_comm, w_.parallel.overlap_p2p_comm_warmup_flush},
                             w_.parallel.microbatch_group);
  plan.memory = stage_memory(w_, mb_, v_, peak_in_flight(programs_), topo_.device_profile);
  double batch = static_cast<double>(w_.training.global_batch);
  plan.hardware_flops = moe_hardware_flops(w_, batch);  // = hardware_flops for dense models (moe_math)
  plan.model_flops_causal = moe_model_flops_causal(w_, batch);
  // MFU counts attention over the full s x s scores (SC21 Eq. 3) where the kernels compute them
  // (unfused attention); flash attention skips the masked half, which is then neither executed nor
  // useful work, so MFU counts causal attention as NVIDIA does (mfu = mfu_causal; notes() says so).
  plan.model_flops =
      w_.training.attention == Attention::flash ? plan.model_flops_causal : moe_model_flops(w_, batch);
  plan.settings = settings();
  plan.description = description();
  plan.notes = notes();
  plan.hints = nvlink_domain_hints();
  for (const auto& h : plan.hints) plan.notes.push_back("hint: " + h);
  plan.warnings = w_.warnings;
  for (const auto& warning : plan.warnings) plan.notes.push_back("warning: " + warning);
  append_kernels(plan.kernels, "layer forward", layer_.forward);
  append_kernels(plan.kernels, "layer recompute", layer_.recompute);
  append_kernels(plan.kernels, "layer backward", layer_.backward);
  if (moe_) {
    append_kernels(plan.kernels, "MoE layer forward", moe_->layer.forward);
    append_kernels(plan.kernels, "MoE layer backward", moe_->layer.backward);
  }
  // A sliding-window layer differs only in its attention kernels: those, in place of the full ones.
  for (const auto& [group, pass] : {std::pair{"sliding-window layer forward", &window_.windowed_forward},
                                    std::pair{"sliding-window layer backward", &window_.windowed_backward}})
    for (const auto& op : pass->ops)
      if (std::string_view(op.name).starts_with("sliding-window"))
        plan.kernels.push_back({group, op.name, op.seconds, op.flops, op.bytes});
  append_kernels(plan.kernels, "embedding forward", head_.embedding_forward);
  append_kernels(plan.kernels, "embedding backward", head_.embedding_backward);
  append_kernels(plan.kernels, "output layer forward", head_.output_forward);
  append_kernels(plan.kernels, "output layer backward", head_.output_backward);
  for (int s = 0; s < p_; ++s) plan.graph.lane_names.push_back(fmt::format("stage {}", s));
  return plan;
}

StepPlan StepBuilder::build() {
  // Refuse, before any work, graphs too large to replay in reasonable memory (~350 bytes per task).
  constexpr double kMaxTasks = 5e6;
  // Per microbatch and chunk: the forward and backward passes, their pipeline calls, and three tasks for
  // each overlapped transfer (tp_overlap: 4 collectives per layer pass; ring attention: one per pass).
  double layer_passes = 2 + (w_.training.recompute == Recompute::full ? 1 : 0);
  double overlaps = (tp_overlap_ ? 4 * layer_passes : 0) + (layout_.cp > 1 ? 3 : 0);
  double estimate = (6.0 + 3 * overlaps) * p_ * m_ * v_;
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
    int rep = layout_.device(0, 0, 0, s);
    g_.stage_devices.push_back(rep);
    compute_stream_.push_back(g_.add_stream(fmt::format("stage {} compute", s), s, rep));
    dp_stream_.push_back(g_.add_stream(fmt::format("stage {} data-parallel", s), s, rep, false));
    gather_stream_.push_back(g_.add_stream(fmt::format("stage {} parameter gather", s), s, rep, false));
    // Sequence parallelism's overlapped TP collectives (userbuffers, or without them the asynchronous
    // backward ones, layer_ops.cpp); ring attention; MoE all-to-alls beside compute.
    if ((w_.parallel.sequence_parallel && layout_.tp > 1) ||
        (layout_.cp > 1 && w_.parallel.cp_algorithm == CpAlgorithm::ring) ||
        (moe_ && w_.moe.overlap != MoeOverlap::none))
      overlap_stream_.push_back(g_.add_stream(fmt::format("stage {} overlapped comm", s), s, rep, false));
  }
  paired_forward_.assign(p_, std::nullopt);
  build_pipeline();
  build_gradient_sync_and_optimizer();
  plan.graph = std::move(g_);
  return plan;
}

void StepBuilder::check_memory(const std::vector<MemoryBreakdown>& memory) {
  for (size_t s = 0; s < memory.size(); ++s) {
    const MemoryBreakdown& m = memory[s];
    if (m.total() <= topo_.device.hbm_bytes) continue;
    // Suggest only what is not already in use.
    std::vector<std::string> ideas = {"more pipeline or tensor parallelism"};
    if (w_.training.recompute != Recompute::full) ideas.push_back("training.recompute: full");
    if (mb_ > 1) ideas.push_back("a smaller training.micro_batch");
    if (w_.parallel.zero < 1 && layout_.dp > 1) ideas.push_back("parallel.zero: 1");
    if (!w_.parallel.sequence_parallel && layout_.tp > 1) ideas.push_back("parallel.sequence_parallel: true");
    // Activations scale with the tokens a rank holds: when they dominate, splitting the sequence helps.
    if (m.activations > m.weights + m.gradients + m.optimizer)
      ideas.push_back(fmt::format(
          "context parallelism (parallel.cp: {}{})", 2 * layout_.cp,
          // Transformer Engine's ring has no sliding-window attention (transformer_config.cpp refuses it).
          windowed_layers_in(w_.model, 0, w_.model.layers) > 0 &&
                  w_.parallel.cp_algorithm == CpAlgorithm::ring
              ? " with cp_algorithm: all_gather"
              : ""));
    std::string hint;
    for (size_t i = 0; i < ideas.size(); ++i)
      hint += (i == 0 ? "" : i + 1 == ideas.size() ? " or " : ", ") + ideas[i];
    throw InfeasibleConfig(
        MemoryShortfall{"device HBM", m.total(), topo_.device.hbm_bytes},
        fmt::format(
            "stage {} needs {:.1f} GiB per device (weights {:.1f}, gradients {:.1f}, optimizer {:.1f}, "
            "activations {:.1f}, buffers {:.1f}, framework {:.1f}) but a {} has {:.0f} GiB; try {}",
            s, m.total() / GiB, m.weights / GiB, m.gradients / GiB, m.optimizer / GiB, m.activations / GiB,
            m.buffers / GiB, m.framework / GiB, topo_.device.name, topo_.device.hbm_bytes / GiB, hint));
  }
}

std::vector<std::pair<std::string, std::string>> StepBuilder::settings() const {
  const auto& c = w_;
  std::vector<std::pair<std::string, std::string>> moe;
  if (c.moe.enabled())
    moe = {{"ep", std::to_string(c.parallel.ep)},  // summary columns shared with gshard_moe
           {"experts", std::to_string(c.moe.experts)},
           {"top_k", std::to_string(c.moe.top_k)},
           {"capacity_factor", c.moe.dropless() ? "none" : fmt::format("{:.3g}", c.moe.capacity_factor)}};
  auto out = settings_list();
  out.insert(out.end(), moe.begin(), moe.end());
  return out;
}

std::vector<std::pair<std::string, std::string>> StepBuilder::settings_list() const {
  const auto& c = w_;
  return {{"model_params_billion", fmt::format("{:.5g}", moe_total_params(c) / 1e9)},
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
          {"precision", topology::to_string(c.training.precision)},
          {"cp", std::to_string(layout_.cp)},
          {"cp_algorithm", layout_.cp > 1 ? to_string(c.parallel.cp_algorithm) : "none"},
          {"tp_overlap", tp_overlap_ ? "true" : "false"},
          {"rank_order", to_string(c.parallel.rank_order)},
          {"sliding_window", std::to_string(c.model.sliding_window)},
          {"full_attention_every", std::to_string(c.model.full_attention_every)}};
}

std::string StepBuilder::description() const {
  std::string schedule =
      p_ == 1 ? "no pipeline"
      : w_.parallel.schedule == Schedule::interleaved && v_ > 1
          ? fmt::format("interleaved 1F1B, {} virtual stages{}", v_,
                        w_.parallel.microbatch_group > 0 && w_.parallel.microbatch_group != p_
                            ? fmt::format(" in groups of {} microbatches", w_.parallel.microbatch_group)
                            : "")
      : w_.parallel.schedule == Schedule::gpipe ? "GPipe"
                                                : "1F1B";
  std::string cp =
      layout_.cp > 1
          ? fmt::format(" x cp {} ({})", layout_.cp,
                        w_.parallel.cp_algorithm == CpAlgorithm::ring ? "ring attention" : "all-gather KV")
          : "";
  // The per-tensor fp8 format's scaling recipe (precision_bytes.hpp), which the quantize kernels follow.
  std::string fp8 = w_.training.precision == topology::Precision::fp8
                        ? fmt::format(", fp8 {} scaling", to_string(w_.training.fp8_recipe))
                        : "";
  // Expert parallelism folds over the same ranks (moe_step.cpp): its degrees and the dispatcher.
  std::string experts =
      w_.moe.enabled() && w_.parallel.ep > 1
          ? fmt::format(", experts ep {}{} ({} dispatcher)", w_.parallel.ep,
                        w_.parallel.etp > 1 ? fmt::format(" x etp {}", w_.parallel.etp) : "",
                        kMoeDispatcherNames.name(w_.moe.dispatcher))
          : "";
  std::string order = layout_.pp_before_dp ? " (ranks tp-cp-pp-dp: a replica contiguous)" : "";
  long long windowed = windowed_layers_in(w_.model, 0, w_.model.layers);
  std::string window = windowed > 0 ? fmt::format(" ({}-token sliding window in {} of {} layers)",
                                                  w_.model.sliding_window, windowed, w_.model.layers)
                                    : "";
  return fmt::format(
      "tp {}{} x pp {} x dp {}{}{}, {}, micro-batch {} ({} per step), recompute {}{}{}{}{}{}{}", layout_.tp,
      cp, layout_.pp, layout_.dp, order, experts, schedule, mb_, m_, to_string(w_.training.recompute), fp8,
      w_.training.attention == Attention::flash ? ", flash attention" : "", window,
      w_.parallel.sequence_parallel ? ", sequence parallel" : "",
      tp_overlap_ ? ", TP comm overlapped with GEMMs" : "",
      w_.parallel.zero
          ? fmt::format(
                ", ZeRO-{}{}{}", w_.parallel.zero,
                w_.parallel.shard_group > 0 ? fmt::format(" (HSDP, shard group {})", w_.parallel.shard_group)
                                            : "",
                w_.parallel.reshard_after_forward ? "" : ", parameters kept gathered for the backward")
          : "");
}

std::vector<std::string> StepBuilder::notes() const {
  std::vector<std::string> n;
  if (layout_.cp == 1)
    n.push_back(fmt::format(
        "folded: {} data-parallel replicas and {} tensor-parallel ranks per stage share the compute "
        "of one representative; their traffic is on the network",
        layout_.dp, layout_.tp));
  else
    n.push_back(fmt::format(
        "folded: {} data-parallel replicas, {} context-parallel and {} tensor-parallel ranks per stage share "
        "the compute of one representative (causal load balancing makes the context-parallel ranks' work "
        "equal); their traffic is on the network; gradients are reduced over the {} data x context "
        "parallel ranks",
        layout_.dp, layout_.cp, layout_.tp, layout_.dp * layout_.cp));
  if (layout_.cp > 1 && w_.parallel.cp_algorithm == CpAlgorithm::ring)
    n.push_back(
        "ring attention: the cp-1 KV-block transfers of each layer overlap the attention blocks on the "
        "previous block; only what a transfer takes beyond its block is exposed (cp comm)");
  if (w_.parallel.tp_overlap && !tp_overlap_)
    n.push_back(layout_.tp == 1
                    ? "tp_overlap: nothing to overlap with tp = 1"
                    : fmt::format("tp_overlap ignored: Transformer Engine's userbuffers overlap needs "
                                  "a Hopper or newer GPU; the {} runs TP collectives serially",
                                  topo_.device.name));
  if (tp_overlap_)
    n.push_back(
        "tp_overlap: Transformer Engine's userbuffers run each sequence-parallel all-gather / reduce-scatter "
        "beside the GEMM it feeds or drains, split as parallel.tp_overlap_gemms says (ring_exchange: tp "
        "chunks over the copy engines; pipeline: num_splits chunks, the last reduce-scatter exposed; bulk: "
        "beside the whole GEMM), those GEMMs on the SMs the communication leaves them; the backward "
        "all-gathers of the saved inputs for the wgrad GEMMs are counted");
  n.push_back(
      w_.training.attention == Attention::flash
          ? fmt::format("attention: one fused kernel ({}{} efficiencies of the {} profile); mfu counts "
                        "causal attention FLOPs (the masked half is skipped), as NVIDIA's NeMo formulas do{}",
                        cm_->profile().attention.kernel,
                        cm_->profile().attention.library.empty()
                            ? ""
                            : fmt::format(", library release {}", cm_->profile().attention.library),
                        topo_.device_profile.device,
                        w_.model.dropout > 0
                            ? fmt::format("; not modelled: the cost of the dropout inside the kernel "
                                          "(model.dropout {:g}): its efficiencies are without dropout",
                                          w_.model.dropout)
                            : "")
          : std::string("attention: unfused kernels with the s x s scores in HBM (training.attention: "
                        "unfused); mfu counts attention over the full s x s scores (Megatron SC21 Eq. 3), "
                        "mfu_causal the causal count"));
  if (p_ > 1 && v_ > 1 && w_.parallel.overlap_p2p_comm)
    n.push_back(
        w_.parallel.overlap_p2p_comm_warmup_flush
            ? "pipeline: overlap_p2p_comm with warm-up and flush: each receive is posted one step early and "
              "waited just before the forward or backward that consumes it; sends complete before the stage "
              "goes on"
            : "pipeline: overlap_p2p_comm in the steady state (each receive posted one step early and waited "
              "just before the compute that consumes it; sends complete before the stage goes on); the "
              "warm-up and the flush keep blocking calls (overlap_p2p_comm_warmup_flush: false, "
              "Megatron-Core's default)");
  else if (p_ > 1 && v_ > 1)
    n.push_back(
        "pipeline: each transfer holds both stages until it is done (parallel.overlap_p2p_comm: false; "
        "Megatron-Bridge and NeMo turn it on whenever virtual stages > 1)");
  else if (p_ > 1 && w_.parallel.overlap_p2p_comm)
    n.push_back(
        "pipeline: overlap_p2p_comm needs virtual stages (Megatron-Core runs it with the interleaved "
        "schedule only): ignored, each transfer holds both stages until it is done");
  if (w_.parallel.sequence_parallel && layout_.tp > 1 && !tp_overlap_)
    n.push_back(
        "sequence parallelism without userbuffers: in the backward, the QKV and fc1 inputs are re-gathered "
        "beside their dgrad GEMMs and their dgrads reduce-scattered beside their wgrad GEMMs (Transformer "
        "Engine's asynchronous NCCL calls); the proj and fc2 output gradients are gathered before their "
        "GEMMs");
  double slowdown = topo_.device_profile.overlap_compute_slowdown;
  n.push_back(
      slowdown > 1
          ? fmt::format(
                "compute the schedule overlaps with data-parallel communication (bucketed "
                "gradient reduction, parameter gathers) runs {:.3g}x slower while that "
                "communication runs (overlap_compute_slowdown of the {} profile, for its idle-network "
                "time)",
                slowdown, topo_.device_profile.device)
          : fmt::format("not modelled on this device: compute slowdown under overlapped "
                        "communication (the {} profile sets no overlap_compute_slowdown)",
                        topo_.device_profile.device));
  if (w_.parallel.zero >= 3 && grad_ranks() > 1)
    n.push_back(
        "ZeRO-3: parameters are gathered per layer in every microbatch's forward and backward and "
        "gradients reduce-scattered in every backward (FSDP2 / Megatron-FSDP with gradient accumulation); "
        "a pass's L layer gathers are folded into one exposed first gather and one gather beside the "
        "compute");
  if (moe_) n.push_back(moe_note());
  n.push_back("not modelled: data loading, CPU launch stalls");
  return n;
}

}  // namespace podsim::workload::megatron

namespace podsim::workload {

std::vector<int> simulated_tp_ranks(const topology::Topology& topo, const ParallelLayout& layout) {
  std::vector<int> out;
  for (int peer : topo.rail_peers(layout.device(0, 0, 0, 0)))
    if (peer < layout.tp) out.push_back(peer);
  if (out.empty()) out = {0};
  return out;
}

StepPlan build_megatron_step(const topology::Topology& topo, const WorkloadConfig& w, int micro_batch,
                             int virtual_stages) {
  return megatron::StepBuilder(topo, w, micro_batch, virtual_stages).build();
}

StepPlan describe_megatron_step(const topology::Topology& topo, const WorkloadConfig& w, int micro_batch,
                                int virtual_stages) {
  return megatron::StepBuilder(topo, w, micro_batch, virtual_stages).describe();
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
  int devices() const override { return w_.parallel.tp * w_.parallel.cp * w_.parallel.pp * w_.parallel.dp; }
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
  return std::make_unique<MegatronModel>(read_transformer_on(root, file, topo), topo);
}

}  // namespace podsim::workload
