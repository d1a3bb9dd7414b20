// The kernels and the token traffic of one MoE layer for one microbatch on one rank, as Megatron-Core
// runs them: router GEMM and top-k, permute, token dispatch over the EP group (all-to-all, or all-gather),
// the expert-TP all-gather, the grouped GEMMs of the local experts, the expert-TP reduce-scatter, combine,
// unpermute, and the shared experts as a tensor-parallel dense MLP. The attention half of the layer is the
// dense layer's (layer_ops.cpp), taken from its costs.
#pragma once

#include "podsim/calibration/compute_model.hpp"
#include "podsim/workload/transformer/layer_ops.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {

// Token traffic of one MoE layer per rank per microbatch, each direction of one pass.
struct MoeTraffic {
  // Tokens this rank routes (its sequence-parallel shard) and the token copies it sends (x top_k).
  double routed_tokens = 0;
  // alltoall: bytes each EP rank sends in one dispatch (and one combine), to every EP rank itself
  // included (nccl-tests' all_to_all convention), scaled to the busiest receiver (imbalance / capacity).
  // allgather: the gathered buffer (all EP ranks' routed tokens' hidden states, nccl-tests convention);
  // the combine is a reduce-scatter of the same buffer.
  // flex: the bytes each rank sends in one dispatch, both stages (the two fields below).
  double dispatch_bytes = 0;
  // flex (network/expert_dispatch.hpp): bytes a rank sends to its counterpart on each other node (RDMA),
  // and writes into each other rank of its node (NVLink), in one dispatch; the combine mirrors them.
  double flex_to_each_remote_peer = 0, flex_to_each_local_peer = 0;
  // With etp > 1: the all-gather (and reduce-scatter) of the received tokens over the ETP group.
  double etp_bytes = 0;
  // Tokens the busiest local expert computes on this rank, and the mean of the others.
  double busiest_expert_tokens = 0, mean_expert_tokens = 0;
};

MoeTraffic moe_traffic(const WorkloadConfig& w, int micro_batch);

struct MoeLayerCosts {
  LayerCosts layer;  // one MoE layer: attention half of the dense layer + the MoE block (compute only)
  double shared_forward_seconds = 0, shared_backward_seconds = 0;  // the shared experts' share of it
  double block_forward_seconds = 0, block_backward_seconds = 0;    // the MoE block's share (no attention)
  MoeTraffic traffic;
};

// `dense` = layer_costs(w, micro_batch, cm) of the same workload (its MLP is replaced).
MoeLayerCosts moe_layer_costs(const WorkloadConfig& w, int micro_batch, const calibration::ComputeModel& cm,
                              const LayerCosts& dense);

// What training.recompute_modules moe_act / layernorm add to one MoE layer's recompute pass `p`: the
// experts' activation function over the received token copies (and its fp8 cast), the pre-MLP norm over
// the routed tokens; both memory-bound element-wise kernels (recompute_modules.hpp).
void moe_selective_recompute(PassCost& p, const WorkloadConfig& w, const calibration::ComputeModel& cm,
                             const MoeTraffic& t);

}  // namespace podsim::workload
