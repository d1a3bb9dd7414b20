// One training step ready to replay, with everything the reports need, whatever the workload kind
// (Megatron GPT, mixture of experts, weight streaming, parameter server...).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "podsim/plan/task_graph.hpp"
#include "podsim/workload/memory_breakdown.hpp"
#include "podsim/workload/parallel_layout.hpp"

namespace podsim::workload {

// Workload kinds produce plans: they speak the plan layer's vocabulary unqualified.
using plan::Category;
using plan::description;
using plan::kCategories;
using plan::kChargeOrder;
using plan::Stream;
using plan::Task;
using plan::TaskGraph;
using plan::TaskKind;
using plan::to_string;

// The cost of one kernel, for result.json's per-kernel detail.
struct KernelCost {
  std::string group;  // "forward", "backward", "expert FFN", ...
  std::string name;
  double seconds = 0, flops = 0, bytes = 0;
};

struct StepPlan {
  std::string workload_kind;
  TaskGraph graph;
  int devices = 0;                      // devices the job occupies
  std::vector<MemoryBreakdown> memory;  // per lane of the graph (pipeline stage, device class), bytes
  double hardware_flops = 0;            // executed per step by the whole job (with recomputation)
  double model_flops = 0;               // per step without recomputation (attention: full s x s, SC21 Eq. 3)
  double model_flops_causal = 0;        // the same counting causal attention (s^2 terms halved); 0 = as above
  double peak_flops = 0;                // per device, for the precision in use
  double tokens_per_step = 0;
  // Bytes one checkpoint of the job holds: every parameter once in its stored precision plus the optimizer
  // state, replicas counted once (0 = the kind does not say; goodput then needs checkpoint.bytes).
  double model_state_bytes = 0;
  double samples_per_step = 0;  // sequences or examples
  // Kinds that fold data-parallel replicas into one representative say how ranks map to replicas and
  // pipeline stages (the graph's lanes), so that slow devices can be told apart (driver/straggler_replay);
  // tp = 0: the kind does not say. `lockstep_replicas` consecutive replicas synchronise every layer
  // (expert parallelism wider than tp x cp), so the slowest of them sets their pace.
  ParallelLayout rank_layout{0, 0, 0, 0};
  int lockstep_replicas = 1;
  // Settings of this step, written to summary.csv (known column names, see report/writers.cpp) and shown
  // in the human summary: ("tp", "8"), ("schedule", "interleaved"), ...
  std::vector<std::pair<std::string, std::string>> settings;
  std::string description;          // one line for the human summary
  std::vector<KernelCost> kernels;  // per-kernel detail
  std::vector<std::string> notes;   // modelling choices and what is not modelled
  std::vector<std::string> hints;   // what the user could change, on the terminal (also in notes as "hint: ")
  std::vector<std::string> warnings;  // about the input (a key left unused), on the terminal and in notes
  // Workload-specific figures for the human summary and result.json, e.g. ("all_to_all_share", 0.3).
  std::vector<std::pair<std::string, double>> metrics;
};

}  // namespace podsim::workload
