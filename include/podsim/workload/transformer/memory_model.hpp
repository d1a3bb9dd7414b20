// Device memory per pipeline stage: weights, gradients, optimizer state, the activations the schedule
// holds at its peak (Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models",
// MLSys 2023, Sec. 4), and buffers.
#pragma once

#include <string>
#include <vector>

#include "podsim/calibration/device_profile.hpp"
#include "podsim/workload/memory_breakdown.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {

// Parameters held by one tensor-parallel rank of pipeline stage `stage` (embeddings on the first stage,
// the tied output embedding and final norm on the last).
double stage_params(const WorkloadConfig& w, int stage);

// Activation bytes one layer keeps for one microbatch until its backward, for the chosen recomputation.
double layer_activation_bytes(const WorkloadConfig& w, int micro_batch, Recompute recompute);

// Activation bytes held once, by the layer whose backward is running, beyond what it stored: the rest of
// its activations, rebuilt by recomputation (0 without recomputation). Stored x layers + this is
// monotone: full <= selective <= none.
double recompute_working_bytes(const WorkloadConfig& w, int micro_batch, Recompute recompute);

// Bytes the loss keeps per logit for the backward: the 16-bit logits alone with the fused loss (the gradient
// is written over them), plus two fp32 copies (softmax, exp) unfused. The output layer's and every
// multi-token-prediction head's.
double loss_bytes_per_logit(const WorkloadConfig& w);

// Ranks a ZeRO shard is split over: the whole data-parallel group, or with HSDP (parallel.shard_group)
// the shard group; memory divides by this, never by dp when the shards are replicated across groups.
double zero_shard_ranks(const ParallelConfig& p);

// Microbatches whose embedding activations a first stage holds at once: its chunk passes in flight, at most
// the step's microbatches (only the first model chunk holds the embedding).
double embedding_in_flight(const WorkloadConfig& w, int micro_batch, int stage_in_flight);

// ZeRO-3: parameters of stage `stage` (per tensor-parallel rank) gathered at once for compute, before
// removing the local shard: two units (the layer computing and the next, prefetched), at most the stage.
double zero3_gathered_params(const WorkloadConfig& w, int stage);

std::vector<MemoryBreakdown> stage_memory(const WorkloadConfig& w, int micro_batch, int virtual_stages,
                                          const std::vector<int>& peak_in_flight,
                                          const calibration::DeviceProfile& profile);

}  // namespace podsim::workload
