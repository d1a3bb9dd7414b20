// The transformer_lm workload on a Cerebras wafer cluster (topology kind wafer_cluster): chooses the
// execution mode (training.execution_mode; auto = layer-pipelined when the model fits on one wafer, else
// weight streaming) and the micro-batches worth simulating.
#pragma once

#include <memory>
#include <string>

#include "podsim/topology/topology.hpp"
#include "podsim/workload/workload_model.hpp"

namespace podsim::workload {

std::unique_ptr<WorkloadModel> make_cerebras_model(const ConfigNode& root, const std::string& file,
                                                   const topology::Topology& topo);

}  // namespace podsim::workload
