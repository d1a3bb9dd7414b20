// Memory of the MoE layers per rank: the routed experts are split over ep (experts/ep per rank) and etp
// (columns), and their gradients / optimizer state are sharded over the expert data-parallel group
// (tp*cp*dp / (ep*etp) ranks) by the distributed optimizer, as Megatron-Core does; the router and the
// shared experts are dense parameters (the shared experts tensor-parallel like a dense MLP).
#pragma once

#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {

// Expert data-parallel ranks: the tp x cp x dp ranks of a stage folded by ep x etp.
double expert_data_parallel(const ParallelConfig& p);
// First layer of pipeline stage `stage` and its layer count (the contiguous split of 1F1B; the
// interleaved schedule's chunks hold the same number of MoE layers when every layer is MoE).
long long stage_first_layer(const WorkloadConfig& w, int stage);
long long stage_moe_layers(const WorkloadConfig& w, int stage);
// Per rank, one MoE layer's dense parameters beyond the dense layer's (router + shared experts - the MLP).
double moe_dense_delta_per_layer(const WorkloadConfig& w);
// Per rank, one MoE layer's routed-expert parameters: experts/ep experts of ffn_hidden/etp columns.
double expert_params_per_layer(const WorkloadConfig& w);
// Routed-expert parameters a rank of stage `stage` holds.
double expert_stage_params(const WorkloadConfig& w, int stage);
// What stage_params adds for the MoE layers of `stage`: dense delta + routed experts (0 for dense models).
double moe_stage_params_delta(const WorkloadConfig& w, int stage);
// Activation bytes one MoE layer stores beyond the dense layer (the permuted token copies, the experts'
// GEMM inputs and the router probabilities in place of the dense MLP's tensors). 0 with full
// recomputation (only the layer input is kept).
double moe_activation_delta(const WorkloadConfig& w, int micro_batch, Recompute recompute);
// Bytes one MoE layer does not store under training.recompute_modules (recompute_modules.hpp): moe_act
// frees fc2's input (received token copies x ffn_hidden/etp, at the GEMM-input width), layernorm the
// pre-MLP norm's output (routed tokens x hidden, activation width). 0 when the module is not recomputed.
double moe_act_freed_bytes(const WorkloadConfig& w, int micro_batch);
double moe_norm_freed_bytes(const WorkloadConfig& w, int micro_batch);
// What the backward of one MoE layer holds again once its recompute has rebuilt them (their sum).
double moe_recompute_working_bytes(const WorkloadConfig& w, int micro_batch);

}  // namespace podsim::workload
