#include "podsim/workload/cerebras_model.hpp"

#include <fmt/format.h>

#include "podsim/core/config_node.hpp"
#include "podsim/core/error.hpp"
#include "podsim/topology/wafer_cluster.hpp"
#include "podsim/workload/cerebras_config.hpp"
#include "podsim/workload/layer_pipelined.hpp"
#include "podsim/workload/weight_streaming.hpp"

namespace podsim::workload {
namespace {

// Each layer-pipelined candidate is a full pipeline replay; a few of the largest micro-batches that fit
// are enough to find the fastest (smaller ones only add pipeline steps once the GEMMs fill the regions).
constexpr int kPipelinedCandidates = 3;
// Tasks above this make a replay slow; such micro-batches are not tried.
constexpr long long kMaxTasks = 400000;

class CerebrasModel final : public WorkloadModel {
 public:
  CerebrasModel(CerebrasWorkload cw, const topology::Topology& topo) : cw_(std::move(cw)), topo_(topo) {
    const WorkloadConfig& w = cw_.w;
    long long per_system = w.training.global_batch / w.parallel.dp;
    auto fits_pipelined = [&](int mb) { return layer_pipelined_placement(topo_, w, mb).has_value(); };
    mode_ = cw_.mode;
    if (mode_ == ExecutionMode::auto_select)
      mode_ = fits_pipelined(1) ? ExecutionMode::layer_pipelined : ExecutionMode::weight_streaming;
    if (!w.training.micro_batch_auto) {
      micro_batches_ = {w.training.micro_batch};
    } else if (mode_ == ExecutionMode::weight_streaming) {
      int mb = largest_streaming_micro_batch(topo_, w);
      micro_batches_ = {mb > 0 ? mb : 1};  // 1 when nothing fits: reported as out_of_memory
    } else {
      long long blocks = w.model.layers + 2;
      for (long long b = 1; b <= per_system; b *= 2)
        if (per_system % b == 0 && (per_system / b) * blocks * 4 <= kMaxTasks &&
            fits_pipelined(static_cast<int>(b)))
          micro_batches_.insert(micro_batches_.begin(), static_cast<int>(b));
      if (micro_batches_.size() > kPipelinedCandidates) micro_batches_.resize(kPipelinedCandidates);
      if (micro_batches_.empty()) micro_batches_ = {1};
    }
    long long blocks = 2 * w.model.layers + 3;
    for (int mb : micro_batches_)
      if (per_system / mb * blocks * 3 > kMaxTasks)
        throw InputError(fmt::format(
            "{}: {} micro-batches of {} per system make a step of more than {} tasks; use a larger "
            "training.micro_batch (or auto)",
            cw_.w.file, per_system / mb, mb, kMaxTasks));
  }
  std::string name() const override { return cw_.w.name; }
  std::string kind() const override { return "transformer_lm"; }
  int devices() const override { return cw_.w.parallel.dp; }
  std::vector<std::string> candidates() const override {
    std::vector<std::string> out;
    for (int mb : micro_batches_)
      out.push_back(fmt::format("execution_mode={} micro_batch={}", to_string(mode_), mb));
    return out;
  }
  StepPlan build(size_t i) const override {
    return mode_ == ExecutionMode::layer_pipelined
               ? build_layer_pipelined_step(topo_, cw_, micro_batches_.at(i))
               : build_weight_streaming_step(topo_, cw_, micro_batches_.at(i));
  }
  StepPlan describe_infeasible(size_t i) const override {
    return mode_ == ExecutionMode::layer_pipelined
               ? describe_layer_pipelined_step(topo_, cw_, micro_batches_.at(i))
               : describe_weight_streaming_step(topo_, cw_, micro_batches_.at(i));
  }

 private:
  CerebrasWorkload cw_;
  const topology::Topology& topo_;
  ExecutionMode mode_ = ExecutionMode::weight_streaming;
  std::vector<int> micro_batches_;
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
