#include "podsim/workload/wafer/cerebras_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "podsim/core/config_node.hpp"
#include "podsim/core/error.hpp"
#include "podsim/topology/wafer_cluster.hpp"
#include "podsim/workload/wafer/cerebras_config.hpp"
#include "podsim/workload/wafer/layer_pipelined.hpp"
#include "podsim/workload/wafer/weight_streaming.hpp"

namespace podsim::workload {
namespace {

// Tasks above this make a replay slow; such micro-batches are not tried (or, given with --set, refused).
constexpr long long kMaxTasks = 400000;

// Tasks of one step's graph: a few per block and micro-batch (forward, backward, transfers).
long long step_tasks(ExecutionMode mode, const WorkloadConfig& w, int micro_batch) {
  long long micro_batches = w.training.global_batch / w.parallel.dp / micro_batch;
  return mode == ExecutionMode::layer_pipelined ? micro_batches * (w.model.layers + 2) * 4
                                                : micro_batches * (2 * w.model.layers + 3) * 3;
}

class CerebrasModel final : public WorkloadModel {
 public:
  CerebrasModel(CerebrasWorkload cw, const topology::Topology& topo) : cw_(std::move(cw)), topo_(topo) {
    const WorkloadConfig& w = cw_.w;
    // auto offers both modes' candidates and the simulation keeps the fastest per sample. Choosing
    // layer-pipelined whenever the model fit on the wafer picked a mode up to 1.84x slower than weight
    // streaming (whose step time then fell by half when the batch doubled and auto switched).
    bool any = cw_.mode == ExecutionMode::auto_select;
    if (any || cw_.mode == ExecutionMode::layer_pipelined) add_pipelined(any);
    if (any || cw_.mode == ExecutionMode::weight_streaming) add_streaming(any);
    if (settings_.empty())  // auto and nothing fits: reported as out_of_memory with what did not fit
      settings_.push_back({ExecutionMode::weight_streaming, std::max(1, fixed_micro_batch())});
    for (const auto& [mode, mb] : settings_)
      if (step_tasks(mode, w, mb) > kMaxTasks)
        throw InputError(fmt::format(
            "{}: {} micro-batches of {} per system make a step of more than {} tasks; use a larger "
            "training.micro_batch (or auto)",
            cw_.w.file, w.training.global_batch / w.parallel.dp / mb, mb, kMaxTasks));
  }
  std::string name() const override { return cw_.w.name; }
  std::string kind() const override { return "transformer_lm"; }
  int devices() const override { return cw_.w.parallel.dp; }
  std::vector<std::string> candidates() const override {
    std::vector<std::string> out;
    for (const auto& [mode, mb] : settings_)
      out.push_back(fmt::format("execution_mode={} micro_batch={}", to_string(mode), mb));
    return out;
  }
  StepPlan build(size_t i) const override {
    auto [mode, mb] = settings_.at(i);
    return mode == ExecutionMode::layer_pipelined ? build_layer_pipelined_step(topo_, cw_, mb)
                                                  : build_weight_streaming_step(topo_, cw_, mb);
  }
  StepPlan describe_infeasible(size_t i) const override {
    auto [mode, mb] = settings_.at(i);
    return mode == ExecutionMode::layer_pipelined ? describe_layer_pipelined_step(topo_, cw_, mb)
                                                  : describe_weight_streaming_step(topo_, cw_, mb);
  }

 private:
  // The micro-batch given with --set, or 0 (the runtime's choice).
  int fixed_micro_batch() const { return cw_.w.training.micro_batch_auto ? 0 : cw_.w.training.micro_batch; }

  bool fits_pipelined(int mb) const { return layer_pipelined_placement(topo_, cw_.w, mb).has_value(); }

  // Layer-pipelined candidates; with `only_if_fits` (auto mode) none when the model does not fit.
  void add_pipelined(bool only_if_fits) {
    const WorkloadConfig& w = cw_.w;
    if (int mb = fixed_micro_batch()) {
      if (!only_if_fits || fits_pipelined(mb)) settings_.push_back({ExecutionMode::layer_pipelined, mb});
      return;
    }
    // Every power-of-two micro-batch that fits: smaller ones shorten the pipeline's fill and drain,
    // larger ones amortize per-kernel overheads, and which wins depends on the model and the batch.
    // (Keeping only the three largest missed the fastest, micro-batch 1, on GPT-2 small.)
    long long per_system = w.training.global_batch / w.parallel.dp;
    std::vector<int> fitting;
    for (long long b = 1; b <= per_system; b *= 2)
      if (per_system % b == 0 &&
          step_tasks(ExecutionMode::layer_pipelined, w, static_cast<int>(b)) <= kMaxTasks &&
          fits_pipelined(static_cast<int>(b)))
        fitting.push_back(static_cast<int>(b));
    if (fitting.empty() && !only_if_fits) fitting = {1};  // reported as out_of_memory
    for (int mb : fitting) settings_.push_back({ExecutionMode::layer_pipelined, mb});
  }

  // The weight-streaming candidate: the largest micro-batch whose activations fit in the wafer's SRAM.
  void add_streaming(bool only_if_fits) {
    int mb = fixed_micro_batch();
    if (mb == 0) mb = largest_streaming_micro_batch(topo_, cw_.w);
    if (mb == 0 && only_if_fits) return;
    settings_.push_back({ExecutionMode::weight_streaming, mb > 0 ? mb : 1});
  }

  CerebrasWorkload cw_;
  const topology::Topology& topo_;
  std::vector<std::pair<ExecutionMode, int>> settings_;
};

}  // namespace

std::unique_ptr<WorkloadModel> make_cerebras_model(const ConfigNode& root, const std::string& file,
                                                   const topology::Topology& topo) {
  CerebrasWorkload cw = read_cerebras_workload(root, topo);
  cw.w.kind = "transformer_lm";
  cw.w.file = file;
  return std::make_unique<CerebrasModel>(std::move(cw), topo);
}

}  // namespace podsim::workload
