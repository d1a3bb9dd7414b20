// Context parallelism (parallel.cp): the cp ranks of a CP group split every sequence of the micro-batch.
// Each holds s/cp tokens, as two of 2*cp chunks (rank i: chunks i and 2cp-1-i), so that every rank gets
// the same share of the causal attention work; linear layers, norms and the MLP run on those tokens
// (layer_ops.cpp), while attention needs the keys and values of the whole sequence. How they move, per
// layer and micro-batch:
//  ring (Megatron-Core / Transformer Engine ring attention): cp-1 send/recv steps per pass around the CP
//    ring, each passing one KV block to the next rank while the attention block on the previous block
//    computes (exposed per step: max(0, transfer - block compute)); the backward passes KV and dKV.
//  all_gather (Llama 3, Dubey et al. 2024, Sec. 3.3.2): all-gather K and V over the CP group before
//    attention, reduce-scatter dK and dV in the backward; not overlapped.
#pragma once

#include <vector>

#include "podsim/workload/transformer/layer_ops.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {

// Causal attention work of CP rank `rank` at ring step `step` (the KV block of rank (rank - step) mod cp),
// in units of one (s/2cp) x (s/2cp) chunk pair computed in full: the load balancing that lets one rank
// represent all and one step represent all (every value is 2; each rank does 1/cp of the causal total).
double cp_causal_block_work(int cp, int rank, int step);

// K and V of one rank's s/cp tokens for the KV heads of its tensor-parallel rank: 2*b*(s/cp)*g*d bytes.
double cp_kv_block_bytes(const WorkloadConfig& w, int micro_batch);

// Which pass of a layer (the recomputed forward redoes the attention core's communication too).
enum class CpPass { forward, recompute, backward };

// Ring attention: bytes one rank sends to the next per step (one KV block forward, KV + dKV backward;
// 0 for a recompute pass that does not redo the attention core), and the steps per layer and pass.
double cp_ring_step_bytes(const WorkloadConfig& w, int micro_batch, CpPass pass);
int cp_ring_steps(const WorkloadConfig& w);

// All-gather variant: the collectives over the CP group of one layer's pass (nccl-tests bytes: the
// gathered K,V of the whole sequence). Forward: all-gather. Recompute: all-gather when recomputation
// redoes the attention core. Backward: reduce-scatter of dK,dV, plus the all-gather again when nothing
// was recomputed (the gathered K,V are not kept: they are cp x the local ones per layer).
std::vector<TpCollective> cp_gather_collectives(const WorkloadConfig& w, int micro_batch, CpPass pass);

// Device memory for the communication of the layer computing: the ring's blocks in flight (KV and, in
// the backward, dKV, each double-buffered: one computing, one arriving), or the all-gathered K,V and
// their gradients before the reduce-scatter. 0 without context parallelism.
double cp_buffer_bytes(const WorkloadConfig& w, int micro_batch);

}  // namespace podsim::workload
