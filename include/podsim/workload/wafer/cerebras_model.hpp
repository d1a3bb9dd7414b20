// The transformer_lm workload on a Cerebras wafer cluster (topology kind wafer_cluster): the execution
// mode (training.execution_mode) and the micro-batches worth simulating. auto offers the candidates of both
// modes that fit (layer-pipelined only when the model fits on one wafer) and the simulation keeps the
// fastest per sample.
#pragma once

#include <memory>
#include <string>

#include "podsim/topology/topology.hpp"
#include "podsim/workload/workload_model.hpp"

namespace podsim::workload {

std::unique_ptr<WorkloadModel> make_cerebras_model(const ConfigNode& root, const std::string& file,
                                                   const topology::Topology& topo);

}  // namespace podsim::workload
