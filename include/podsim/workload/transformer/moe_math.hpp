// Closed forms of the mixture-of-experts layer: which layers are MoE, parameters (total and active per
// token), and FLOPs as NVIDIA's NeMo / Megatron-Bridge formulas count them (the top_k routed experts and
// the shared experts a token passes through; the router is not counted in model FLOPs but is executed).
#pragma once

#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {

// Layer i (0-based) is MoE: past the first dense layers and i % layer_freq == 0 (Megatron moe_layer_freq).
bool is_moe_layer(const WorkloadConfig& w, long long layer);
// MoE layers among layers [first, first + count).
long long moe_layers_in(const WorkloadConfig& w, long long first, long long count);
// MoE layers of model chunk `chunk` of pipeline stage `stage` (of `virtual_stages` per stage), as
// pipeline_split assigns layers to chunks (Megatron's interleaved order: chunk c of stage s holds the
// (c * pp + s)-th slice).
long long moe_layers_in_chunk(const WorkloadConfig& w, int virtual_stages, int stage, int chunk);
long long moe_layer_count(const WorkloadConfig& w);

// One MLP of width f as the model builds it (2 or 3 h x f matrices, biases with linear_bias).
double mlp_params(const ModelConfig& m, double f);
double routed_expert_params(const WorkloadConfig& w);  // one routed expert
double shared_expert_params(const WorkloadConfig& w);  // all shared experts of a layer
double router_params(const WorkloadConfig& w);         // h x experts (+ the expert bias of sigmoid routing)

// Whole model with every expert (what is stored), and what one token uses (top_k routed experts).
double moe_total_params(const WorkloadConfig& w);
double moe_active_params(const WorkloadConfig& w);

// Tokens the busiest expert receives as a multiple of the mean: the imbalance, capped by the capacity
// (capacity_factor; tokens beyond it are dropped). 1 for balanced dropless routing.
double busiest_expert_load(const MoeConfig& moe);
// Nodes an EP group spans (ep / (devices per node / etp), at least 1) and the expected distinct ones among a
// token's top_k experts under uniform routing without repetition, the experts spread evenly over the nodes:
// nodes x (1 - C(E - E/nodes, k) / C(E, k)) (routed_to_any_of below). 1 when the group sits in one node.
double ep_group_nodes(const WorkloadConfig& w);
double flex_distinct_nodes(const WorkloadConfig& w);
// P(a token's top_k experts include at least one of `held` given (contiguous) experts) under balanced
// routing: 1 - C(E - held, k) / C(E, k); with group-limited routing (moe.router_groups) averaged over which
// of the held experts' groups the token's router_group_topk groups include. With held = one rank's local
// experts, the share of a rank's tokens the flex dispatcher delivers to another given rank.
double routed_to_any_of(const WorkloadConfig& w, double held);
// Fraction of all routed token copies dropped: the busiest expert drops its excess over the capacity; the
// others (at the mean or below) drop none.
double dropped_fraction(const MoeConfig& moe);

// Forward FLOPs one MoE layer has beyond the dense layer it replaces (can be negative), over `sequences`
// sequences: 2 * tokens * (top_k routed experts + shared experts - the dense MLP), + the router GEMM when
// `with_router`.
double moe_layer_flops_delta(const WorkloadConfig& w, double sequences, bool with_router);

// transformer_math's step counts with the MoE layers (the dense ones when w.moe is disabled).
double moe_model_flops(const WorkloadConfig& w, double global_batch);
double moe_model_flops_causal(const WorkloadConfig& w, double global_batch);
double moe_hardware_flops(const WorkloadConfig& w, double global_batch);

}  // namespace podsim::workload
