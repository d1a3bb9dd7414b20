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

// The summary.csv columns its StepPlan::settings fills (the registry merges every kind's list).
inline std::vector<std::string> cerebras_setting_columns() {
  return {"model_params_billion", "tp",        "pp",        "dp",      "micro_batch",   "global_batch",
          "microbatches",         "recompute", "precision", "systems", "execution_mode"};
}

}  // namespace podsim::workload
