#include "podsim/workload/moe/gshard_builder.hpp"

#include <fmt/format.h>

#include <optional>

#include "podsim/calibration/compute_model.hpp"
#include "podsim/core/config_node.hpp"
#include "podsim/core/error.hpp"
#include "podsim/core/units.hpp"
#include "podsim/network/all_to_all.hpp"
#include "podsim/network/collective.hpp"
#include "podsim/network/link_load.hpp"
#include "podsim/topology/torus.hpp"
#include "podsim/workload/moe/gshard_math.hpp"
#include "podsim/workload/transformer/optimizer_state.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {
namespace {

class Builder {
 public:
  Builder(const topology::Topology& topo, const GShardConfig& w) : topo_(topo), w_(w) {
    calibration::DeviceRates rates;
    rates.peak_flops = topo.device.peak(w.precision);
    rates.hbm_bandwidth = topo.device.hbm_bandwidth;
    rates.sm_count = topo.device.sm_count;
    rates.element_bytes = element_bytes(w.precision);
    cm_.emplace(topo.device_profile, rates);
    costs_ = gshard_layer_costs(w, *cm_);
    for (int d = 0; d < w.devices; ++d) group_.push_back(d);
  }

  StepPlan describe() {
    StepPlan plan;
    plan.workload_kind = "gshard_moe";
    plan.devices = w_.devices;
    plan.tokens_per_step = static_cast<double>(w_.batch_tokens);
    plan.samples_per_step = static_cast<double>(w_.batch_tokens) / w_.seq_len;
    plan.peak_flops = cm_->rates().peak_flops;
    plan.model_flops = gshard_model_flops(w_);
    plan.hardware_flops = gshard_hardware_flops(costs_, w_);
    plan.memory = {gshard_memory(w_, topo_.device_profile)};
    GShardParams params = gshard_params(w_);
    moe_weights_ =
        static_cast<double>(w_.moe_layers()) * w_.experts_per_device() * params.per_expert * w_.weight_bytes;
    plan.settings = {{"model_params_billion", fmt::format("{:.5g}", params.total() / 1e9)},
                     {"dp", std::to_string(w_.devices)},
                     {"ep", std::to_string(std::min<long long>(w_.experts, w_.devices))},
                     {"experts", std::to_string(w_.experts)},
                     {"top_k", std::to_string(w_.top_k)},
                     {"capacity_factor", fmt::format("{:g}", w_.capacity_factor)},
                     {"expert_capacity", fmt::format("{:g}", w_.expert_capacity())},
                     {"global_batch", std::to_string(w_.batch_tokens / w_.seq_len)},
                     {"recompute", w_.rematerialization ? "full" : "none"},
                     {"precision", topology::to_string(w_.precision)}};
    std::string sharing = w_.experts >= w_.devices
                              ? fmt::format("{} expert{} per device", w_.experts_per_device(),
                                            w_.experts_per_device() == 1 ? "" : "s")
                              : fmt::format("each expert on {} devices", w_.devices_per_expert());
    plan.description = fmt::format(
        "{} experts over {} devices ({}), top-{}, capacity {:g} tokens per expert per group of {}, {} MoE of "
        "{} layers, dense weights data parallel x {}{}",
        w_.experts, w_.devices, sharing, w_.top_k, w_.expert_capacity(), w_.group_tokens(), w_.moe_layers(),
        w_.layers, w_.devices, w_.rematerialization ? ", rematerialization" : "");
    auto a2a = network::folded_all_to_all(topo_, group_, gshard_all_to_all_bytes(w_));
    a2a_phase_ = a2a.phase;
    double a2a_time = network::idle_phase_cost(topo_, a2a_phase_).total();
    plan.metrics = {{"moe_weights_GiB", moe_weights_ / GiB},
                    {"expert_capacity", w_.expert_capacity()},
                    {"all_to_all_MB", gshard_all_to_all_bytes(w_) / 1e6},
                    {"all_to_alls", static_cast<double>(all_to_alls())},
                    {"all_to_all_s", all_to_alls() * a2a_time}};
    plan.notes = {
        fmt::format(
            "folded: the {} devices run the same program (balanced routing: every expert receives "
            "exactly its capacity), device 0 stands for all; every device's traffic is on the network",
            w_.devices),
        a2a.fold,
        "assumed: perfectly balanced routing (no overflowed or dropped tokens, no expert load imbalance); "
        "dispatch and combine as one-hot einsums (GShard's implementation)",
        w_.rematerialization ? "rematerialization recomputes each layer's forward, all-to-alls included, "
                               "before its backward"
                             : "no rematerialization: every layer's activations are kept",
        "not modelled: GShard's 2D sharding of attention and embeddings (dense weights are replicated), "
        "overlap of the gradient all-reduce with the backward pass, input pipeline"};
    if (const auto* torus = topo_.family<topology::TorusGeometry>(); torus && torus->cores_per_chip > 1)
      plan.notes.push_back(
          "transfers between the cores of one chip are costed in closed form at the chip's core bandwidth");
    append_kernels(plan.kernels, "encoder attention forward", costs_.attention_forward);
    append_kernels(plan.kernels, "encoder attention backward", costs_.attention_backward);
    append_kernels(plan.kernels, "decoder attention forward", costs_.decoder_attention_forward);
    append_kernels(plan.kernels, "decoder attention backward", costs_.decoder_attention_backward);
    append_kernels(plan.kernels, "dense FFN forward", costs_.dense_ffn_forward);
    append_kernels(plan.kernels, "dense FFN backward", costs_.dense_ffn_backward);
    append_kernels(plan.kernels, "MoE gating and dispatch forward", costs_.gate_dispatch_forward);
    append_kernels(plan.kernels, "MoE experts forward", costs_.experts_forward);
    append_kernels(plan.kernels, "MoE combine forward", costs_.combine_forward);
    append_kernels(plan.kernels, "MoE combine backward", costs_.combine_backward);
    append_kernels(plan.kernels, "MoE experts backward", costs_.experts_backward);
    append_kernels(plan.kernels, "MoE gating and dispatch backward", costs_.gate_dispatch_backward);
    append_kernels(plan.kernels, "output layer forward", costs_.head_forward);
    append_kernels(plan.kernels, "output layer backward", costs_.head_backward);
    plan.graph.lane_names = {"device 0"};
    plan.graph.lane_kind = "device";
    return plan;
  }

  StepPlan build() {
    StepPlan plan = describe();
    const MemoryBreakdown& m = plan.memory.front();
    if (m.total() > topo_.device.hbm_bytes) {
      std::string hint = "more devices (experts spread thinner), fewer experts";
      hint += w_.rematerialization ? ", fewer training.batch_tokens" : ", training.rematerialization: true";
      if (w_.group_tokens() > 1024)
        hint += " or a smaller model.group_size (dispatch masks grow as its square)";
      throw InfeasibleConfig(
          MemoryShortfall{"device HBM", m.total(), topo_.device.hbm_bytes},
          fmt::format("a device needs {:.1f} GiB (weights {:.1f} of which experts {:.1f}, gradients {:.1f}, "
                      "optimizer {:.1f}, activations {:.1f}, buffers {:.1f}, framework {:.1f}) but a {} has "
                      "{:.0f} GiB; try {}",
                      m.total() / GiB, m.weights / GiB, moe_weights_ / GiB, m.gradients / GiB,
                      m.optimizer / GiB, m.activations / GiB, m.buffers / GiB, m.framework / GiB,
                      topo_.device.name, topo_.device.hbm_bytes / GiB, hint));
    }
    g_.stages = 1;
    g_.stage_devices = {0};
    g_.lane_names = plan.graph.lane_names;
    g_.lane_kind = plan.graph.lane_kind;
    stream_ = g_.add_stream("device 0", 0, 0);
    a2a_plan_ = g_.add_plan({a2a_phase_});
    build_step();
    plan.graph = std::move(g_);
    return plan;
  }

 private:
  bool is_moe(long long layer_in_stack) const { return layer_in_stack % w_.moe_every == w_.moe_every - 1; }

  long long all_to_alls() const { return w_.moe_layers() * (w_.rematerialization ? 6 : 4); }

  // Device time accumulates until the next communication, then leaves as one task.
  void task(int plan, workload::Category category, TaskKind kind) {
    g_.add_task({.kind = kind,
                 .stream = stream_,
                 .stage = 0,
                 .compute_seconds = pending_,
                 .plan = plan,
                 .comm_category = category});
    pending_ = 0;
  }

  void moe_forward(TaskKind kind) {
    pending_ += costs_.gate_dispatch_forward.seconds;
    task(a2a_plan_, Category::ep, kind);  // dispatch: tokens to their experts' devices
    pending_ += costs_.experts_forward.seconds;
    task(a2a_plan_, Category::ep, kind);  // combine: expert outputs back to their groups
    pending_ += costs_.combine_forward.seconds;
  }

  void moe_backward() {
    pending_ += costs_.combine_backward.seconds;
    task(a2a_plan_, Category::ep, TaskKind::backward);  // gradients of the expert outputs to the experts
    pending_ += costs_.experts_backward.seconds;
    task(a2a_plan_, Category::ep,
         TaskKind::backward);  // gradients of the dispatched tokens back to their groups
    pending_ += costs_.gate_dispatch_backward.seconds;
  }

  void layer_forward(bool decoder, long long i, TaskKind kind) {
    pending_ += decoder ? costs_.decoder_attention_forward.seconds : costs_.attention_forward.seconds;
    if (is_moe(i))
      moe_forward(kind);
    else
      pending_ += costs_.dense_ffn_forward.seconds;
  }

  void layer_backward(bool decoder, long long i) {
    if (w_.rematerialization) layer_forward(decoder, i, TaskKind::recompute);
    if (is_moe(i))
      moe_backward();
    else
      pending_ += costs_.dense_ffn_backward.seconds;
    pending_ += decoder ? costs_.decoder_attention_backward.seconds : costs_.attention_backward.seconds;
  }

  void build_step() {
    const long long Lh = w_.layers_per_stack();
    for (int stack = 0; stack < 2; ++stack)
      for (long long i = 0; i < Lh; ++i) layer_forward(stack == 1, i, TaskKind::forward);
    pending_ += costs_.head_forward.seconds + costs_.head_backward.seconds;
    for (int stack = 1; stack >= 0; --stack)
      for (long long i = Lh - 1; i >= 0; --i) layer_backward(stack == 1, i);
    task(-1, Category::tp, TaskKind::backward);

    // Gradients: dense weights all-reduced over every device; an expert replicated over several devices
    // all-reduces its gradients among its replicas (devices e, e + experts, e + 2 experts, ...).
    GShardParams params = gshard_params(w_);
    network::Collective dense;
    dense.kind = network::CollectiveKind::all_reduce;
    dense.group = group_;
    dense.bytes = params.dense * w_.grad_reduce_bytes;
    int dense_plan = g_.add_plan(network::plan_collective(topo_, dense));
    task(dense_plan, Category::dp, TaskKind::dp);
    if (w_.devices_per_expert() > 1) {
      std::vector<plan::CommPlan> plans;
      for (long long e = 0; e < w_.experts; ++e) {
        network::Collective c;
        c.kind = network::CollectiveKind::all_reduce;
        for (long long r = 0; r < w_.devices_per_expert(); ++r)
          c.group.push_back(static_cast<int>(e + r * w_.experts));
        c.bytes = static_cast<double>(w_.moe_layers()) * params.per_expert * w_.grad_reduce_bytes;
        plans.push_back(network::plan_collective(topo_, c));
      }
      task(g_.add_plan(network::concurrent(plans)), Category::dp, TaskKind::dp);
    }
    // Optimizer over this device's weights: Adafactor's passes (gshard_adafactor_bytes); Adam as
    // Megatron's mixed-precision optimizer.
    double device_params = gshard_device_params(w_);
    double seconds = w_.adafactor ? cm_->memory_op(gshard_adafactor_bytes(w_))
                                  : optimizer_cost(device_params, OptimizerState{}, 2, *cm_).seconds;
    g_.add_compute(TaskKind::optimizer, stream_, 0, seconds, Category::optimizer);
  }

  const topology::Topology& topo_;
  const GShardConfig& w_;
  std::optional<calibration::ComputeModel> cm_;
  GShardLayerCosts costs_;
  std::vector<int> group_;
  plan::CommPhase a2a_phase_;
  TaskGraph g_;
  int stream_ = -1, a2a_plan_ = -1;
  double pending_ = 0;
  double moe_weights_ = 0;  // bytes of this device's experts
};

class GShardModel final : public WorkloadModel {
 public:
  GShardModel(GShardConfig w, const topology::Topology& topo) : w_(std::move(w)), topo_(topo) {}
  std::string name() const override { return w_.name; }
  std::string kind() const override { return "gshard_moe"; }
  int devices() const override { return w_.devices; }
  std::vector<std::string> candidates() const override {
    return {fmt::format("experts={} devices={}", w_.experts, w_.devices)};
  }
  StepPlan build(size_t) const override { return build_gshard_step(topo_, w_); }
  StepPlan describe_infeasible(size_t) const override { return describe_gshard_step(topo_, w_); }

 private:
  GShardConfig w_;
  const topology::Topology& topo_;
};

}  // namespace

StepPlan build_gshard_step(const topology::Topology& topo, const GShardConfig& w) {
  return Builder(topo, w).build();
}

StepPlan describe_gshard_step(const topology::Topology& topo, const GShardConfig& w) {
  return Builder(topo, w).describe();
}

std::unique_ptr<WorkloadModel> make_gshard_model(const ConfigNode& root, const std::string& file,
                                                 const topology::Topology& topo) {
  // Compute devices only: a wafer cluster's MemoryX and SwarmX endpoints are ranks too, but run nothing.
  GShardConfig w = read_gshard_workload(root, topo.compute_device_count());
  check_precision_on_device(root.child("training"), w.precision, topo.device, topo.source_file);
  w.file = file;
  return std::make_unique<GShardModel>(std::move(w), topo);
}

}  // namespace podsim::workload
