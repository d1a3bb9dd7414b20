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

}  // namespace podsim::workload
