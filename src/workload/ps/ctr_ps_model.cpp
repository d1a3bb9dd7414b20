#include "podsim/workload/ps/ctr_ps_model.hpp"

#include <fmt/format.h>

#include "podsim/core/config_node.hpp"
#include "podsim/core/error.hpp"
#include "podsim/core/units.hpp"
#include "podsim/topology/families.hpp"
#include "podsim/workload/ps/cpu_ps_builder.hpp"
#include "podsim/workload/ps/ctr_config.hpp"
#include "podsim/workload/ps/hierarchical_ps_builder.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {
namespace {

constexpr int kCpuMinibatchesPerStep = 16;  // a CPU step's length does not change its examples/s
constexpr int kMaxMinibatches = 1 << 20;

class CtrPsModel final : public WorkloadModel {
 public:
  CtrPsModel(CtrWorkload w, const topology::Topology& topo) : w_(std::move(w)), topo_(topo) {
    gpu_ = topology::is_family<topology::GpuClusterData>(topo_);
    if (!gpu_) {
      settings_ = {w_.training.minibatches_per_batch ? w_.training.minibatches_per_batch
                                                     : kCpuMinibatchesPerStep};
      return;
    }
    if (w_.training.minibatches_per_batch) {
      settings_ = {w_.training.minibatches_per_batch};
      return;
    }
    // auto: powers of two while the working set fits (a larger batch shares more keys between examples,
    // so it moves fewer rows per example, but needs more HBM and DRAM staging).
    for (int m = 1; m <= kMaxMinibatches; m *= 2) {
      try {
        check_hierarchical_ps_fits(topo_, w_, m);
      } catch (const InfeasibleConfig&) {
        break;
      }
      settings_.push_back(m);
    }
    if (settings_.empty()) settings_ = {1};  // reported as out_of_memory with what did not fit
  }

  std::string name() const override { return w_.name; }
  std::string kind() const override { return "ctr_sparse_ps"; }
  int devices() const override { return topo_.compute_device_count(); }
  std::vector<std::string> candidates() const override {
    std::vector<std::string> out;
    for (int m : settings_) out.push_back(fmt::format("minibatches_per_batch={}", m));
    return out;
  }
  StepPlan build(size_t i) const override {
    return gpu_ ? build_hierarchical_ps_step(topo_, w_, settings_.at(i))
                : build_cpu_ps_step(topo_, w_, settings_.at(i));
  }
  StepPlan describe_infeasible(size_t i) const override {
    return gpu_ ? describe_hierarchical_ps_step(topo_, w_, settings_.at(i))
                : describe_cpu_ps_step(topo_, w_, settings_.at(i));
  }

 private:
  CtrWorkload w_;
  const topology::Topology& topo_;
  bool gpu_ = true;
  std::vector<int> settings_;
};

}  // namespace

std::unique_ptr<WorkloadModel> make_ctr_ps_model(const ConfigNode& root, const std::string& file,
                                                 const topology::Topology& topo) {
  CtrWorkload w = read_ctr_workload(root, file);
  const bool gpu = topology::is_family<topology::GpuClusterData>(topo);
  if (!gpu && !topology::is_family<topology::CpuClusterData>(topo))
    throw InputError(
        fmt::format("{}: kind ctr_sparse_ps runs on a gpu_cluster (hierarchical GPU parameter "
                    "server) or a cpu_cluster (in-memory CPU parameter server), not on a {} ({})",
                    file, topo.kind, topo.source_file));
  check_precision_on_device(root.child("training"), w.training.precision, topo.device, topo.source_file);
  if (gpu) {
    const auto& h = topo.host;
    if (!h.has_memory() || !h.has_ssd() || h.pcie_bandwidth <= 0)
      throw InputError(fmt::format(
          "{}: node: the hierarchical GPU parameter server needs each server's DRAM and SSD; add "
          "node.host_memory_GiB, host_memory_bandwidth_GBps, ssd_TB, ssd_bandwidth_GBps and ssd_iops (see "
          "topologies/gpu-ps-4node.yaml)",
          topo.source_file));
    if (w.ps.dram_cache_bytes > h.memory_bytes)
      throw InputError(fmt::format(
          "{}: the {:.6g} GiB hot-key cache is larger than its tier: a server of {} "
          "has {:.6g} GiB of host DRAM; use less, leaving room to stage the batches being loaded and "
          "dumped",
          w.ps.dram_cache_where, w.ps.dram_cache_bytes / GiB, topo.source_file, h.memory_bytes / GiB));
  }
  return std::make_unique<CtrPsModel>(std::move(w), topo);
}

}  // namespace podsim::workload
