// Megatron-LM PTD-P (tensor + pipeline + data parallel) training step -> task graph.
//
// What is folded, and why it is exact (see also README "Engine and folding"):
// - Data-parallel replicas run identical compute, so only replica 0's pipeline is executed; the network
//   traffic of every replica is still put on the network (pipeline transfers carry the flows of all
//   replicas, gradient all-reduces their whole rings), so fabric contention between replicas is kept.
// - Tensor-parallel ranks of a stage run identical compute, so rank 0 represents them. Their collectives
//   are simulated whole (every ring edge of the TP group). Their inter-server traffic is symmetric across
//   rails and, because the fabric model keeps rails apart (PXN + one fat tree per rail), the traffic of
//   the rank-0 rail is exactly representative; ranks that share rank 0's NIC are simulated too.
// - Compute of one model chunk in one pass is one task: kernels of a layer run back to back on one stream,
//   and the chunk's tensor-parallel collectives are merged into one phase with the summed bytes and
//   latencies (the same time on an idle NVSwitch).
// - Context-parallel ranks (parallel.cp) run identical compute under causal load balancing, so rank 0
//   represents them; their KV traffic is on the network. Transfers that overlap compute (ring attention,
//   parallel.tp_overlap) are a compute task and a comm task side by side, folded over the chunk's layers
//   (megatron_overlap.cpp says why that is exact).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "podsim/topology/topology.hpp"
#include "podsim/workload/parallel_layout.hpp"
#include "podsim/workload/step_plan.hpp"
#include "podsim/workload/transformer/layer_ops.hpp"
#include "podsim/workload/transformer/memory_model.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"
#include "podsim/workload/workload_model.hpp"

namespace podsim::workload {

// Builds the step for a concrete micro-batch size and number of virtual stages. Throws
// InfeasibleConfig("out_of_memory", ...) when a stage does not fit in device memory.
StepPlan build_megatron_step(const topology::Topology& topo, const WorkloadConfig& w, int micro_batch,
                             int virtual_stages);

// The settings and memory of that step without building its graph (for configurations that do not fit).
StepPlan describe_megatron_step(const topology::Topology& topo, const WorkloadConfig& w, int micro_batch,
                                int virtual_stages);

// The Megatron GPT workload (kind: transformer_lm) as a WorkloadModel: candidates are the
// (micro_batch, virtual_stages) settings `auto` expands to.
std::unique_ptr<WorkloadModel> make_megatron_model(const ConfigNode& root, const std::string& file,
                                                   const topology::Topology& topo);

// The summary.csv columns its StepPlan::settings fills (the registry merges every kind's list).
// The tp ranks whose traffic the step builder simulates rather than folds onto rank 0's: those sharing rank
// 0's NIC (one on a DGX A100 or H100, two on a DGX-2H). Their data-parallel groups are the ones it runs.
std::vector<int> simulated_tp_ranks(const topology::Topology& topo, const ParallelLayout& layout);

inline std::vector<std::string> megatron_setting_columns() {
  return {"model_params_billion", "tp",          "pp",           "dp",           "schedule",
          "virtual_stages",       "micro_batch", "global_batch", "microbatches", "recompute",
          "sequence_parallel",    "zero",        "precision"};
}
// Columns added after other kinds' (summary.csv only ever grows at the end): context parallelism and
// the tensor-parallel overlap.
inline std::vector<std::string> megatron_cp_setting_columns() {
  return {"cp", "cp_algorithm", "tp_overlap"};
}
// Columns added after every column summary.csv had (registry late_setting_columns): the rank order and
// sliding-window attention.
inline std::vector<std::string> megatron_late_setting_columns() {
  return {"rank_order", "sliding_window", "full_attention_every"};
}

}  // namespace podsim::workload
