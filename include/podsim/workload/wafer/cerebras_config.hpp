// A transformer_lm workload file read for a Cerebras wafer cluster. The file is the same one GPUs run
// (model.*, training.*); what differs is what `parallel.*` means here: Cerebras trains with plain data
// parallelism across systems and never partitions a model (no tensor or pipeline parallelism), so
// - keys set on the command line (--set workload.parallel.tp=8) to anything but their defaults are an
//   error that says so (dp must be `auto` or the number of systems: it is --set topology.systems=N);
// - keys in the file are a GPU plan for the same model: they are read (so typos still fail) and not
//   applied, and the run's notes list the ones that differ from the defaults.
// One key is Cerebras-only: training.execution_mode (auto | layer_pipelined | weight_streaming).
#pragma once

#include <string>
#include <vector>

#include "podsim/topology/topology.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {

enum class ExecutionMode { auto_select, layer_pipelined, weight_streaming };
inline constexpr auto kExecutionModeNames =
    name_table<ExecutionMode>({{ExecutionMode::auto_select, "auto"},
                               {ExecutionMode::layer_pipelined, "layer_pipelined"},
                               {ExecutionMode::weight_streaming, "weight_streaming"}});
const char* to_string(ExecutionMode m);

struct CerebrasWorkload {
  WorkloadConfig w;  // parallel: tp = pp = 1, dp = systems
  ExecutionMode mode = ExecutionMode::auto_select;
  std::vector<std::string> ignored_parallel;  // "tp=8", ... from the file's GPU plan
};

CerebrasWorkload read_cerebras_workload(const ConfigNode& root, const topology::Topology& topo);

// Summary columns shared by both execution modes.
std::vector<std::pair<std::string, std::string>> cerebras_settings(const CerebrasWorkload& cw,
                                                                   ExecutionMode mode, int micro_batch);
// The note that lists the file's GPU-plan keys that were not applied ("" when there are none).
std::string ignored_plan_note(const CerebrasWorkload& cw);

}  // namespace podsim::workload
