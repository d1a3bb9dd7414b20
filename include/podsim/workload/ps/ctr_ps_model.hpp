// The CTR sparse-embedding workload (kind: ctr_sparse_ps) as a WorkloadModel. The same workload file runs
// on two kinds of machine: on a gpu_cluster (with host DRAM and SSD in its node spec) it is trained by the
// hierarchical GPU parameter server (hierarchical_ps_builder.hpp); on a cpu_cluster by an in-memory CPU
// parameter server (cpu_ps_builder.hpp). `training.minibatches_per_batch: auto` on a GPU cluster tries
// every power of two whose working set fits HBM and host DRAM and keeps the fastest.
#pragma once

#include <memory>
#include <string>

#include "podsim/workload/workload_model.hpp"

namespace podsim::workload {

std::unique_ptr<WorkloadModel> make_ctr_ps_model(const ConfigNode& root, const std::string& file,
                                                 const topology::Topology& topo);

// The summary.csv columns its StepPlan::settings fills (the registry merges every kind's list); the GPU
// and CPU parameter servers fill the same ones except dram_cache_GiB (GPU only).
inline std::vector<std::string> ctr_ps_setting_columns() {
  return {"precision",      "zipf_exponent",      "batch_per_device", "minibatches_per_batch",
          "dram_cache_GiB", "examples_per_batch", "embedding_TB"};
}

}  // namespace podsim::workload
