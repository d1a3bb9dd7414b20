// One pipeline transfer between two stages as the step builder puts it on the network
// (megatron_pipeline.cpp) and the plan's lower bound times it (driver/plan_bound.cpp).
#pragma once

#include <vector>

#include "podsim/plan/flow.hpp"
#include "podsim/topology/topology.hpp"
#include "podsim/workload/parallel_layout.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {

// The activations (or their gradients) of one micro-batch a stage's rank hands to the next: its s/cp
// tokens of the hidden state, in bf16 under an fp8 GEMM format (precision_bytes.hpp).
double pipeline_activation_bytes(const WorkloadConfig& w, int micro_batch);
// What each flow of a transfer carries: those bytes, or a 1/tp slice of them with sequence parallelism or
// scatter/gather.
double pipeline_transfer_flow_bytes(const WorkloadConfig& w, int micro_batch);

// The transfer from stage `from` to stage `to`: every data-parallel replica's and context-parallel rank's
// flow from each of `tp_ranks` (simulated_tp_ranks), a 1/tp slice each with sequence parallelism or
// scatter/gather, after the launch and wire latency.
plan::CommPhase pipeline_transfer(const topology::Topology& topo, const WorkloadConfig& w,
                                  const ParallelLayout& layout, const std::vector<int>& tp_ranks,
                                  int micro_batch, int from, int to);

}  // namespace podsim::workload
