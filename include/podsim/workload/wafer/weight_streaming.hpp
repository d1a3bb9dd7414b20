// Cerebras weight streaming: a training step on N CS-2 systems, data parallel, weights in MemoryX.
//
// How the system runs it (Cerebras HC34, MemoryX and SwarmX glossaries; docs/cerebras.md):
// - Activations stay on the wafer; weights do not. For every micro-batch each layer's weights stream from
//   MemoryX through the SwarmX tree to every system, once for the forward and once more for the backward;
//   the output head is streamed once and runs its forward and backward back to back.
// - Each system runs its share of the batch (global_batch / N sequences, in micro-batches that fit in
//   SRAM); the whole mesh works on one layer at a time.
// - Weight gradients stream back as each layer's backward finishes; SwarmX adds them on the way up and
//   MemoryX accumulates them over micro-batches; after the last micro-batch MemoryX runs the optimizer
//   for each layer as soon as its gradient is complete.
// - Overlap: the weight stream runs `stream_prefetch_blocks` layers ahead of the compute (profile), the
//   gradient stream may lag the compute by as much, so in steady state a layer costs the largest of its
//   compute, its weight stream and its gradient reduction. The one exception is the iteration boundary:
//   the first layer of the next step needs weights updated with the last gradient of this one.
//
// Folding: the N systems run identical compute, so system 0 represents them; every broadcast and
// reduction still carries the flows of all N systems on every SwarmX edge.
#pragma once

#include "podsim/topology/topology.hpp"
#include "podsim/workload/step_plan.hpp"
#include "podsim/workload/transformer/memory_model.hpp"
#include "podsim/workload/wafer/cerebras_config.hpp"

namespace podsim::workload {

// SRAM one wafer needs for a micro-batch: activations of every layer for the backward, the weight and
// gradient buffers of the streams, the runtime's reserve.
MemoryBreakdown weight_streaming_wafer_memory(const topology::Topology& topo, const WorkloadConfig& w,
                                              int micro_batch);
// The largest micro-batch dividing the per-system batch that fits on the wafer; 0 if none does. Larger is
// never slower: compute per micro-batch grows with it, the weights streamed per micro-batch do not.
int largest_streaming_micro_batch(const topology::Topology& topo, const WorkloadConfig& w);

// Throws InfeasibleConfig("out_of_memory") when the micro-batch does not fit on the wafer or the model's
// weights and optimizer state do not fit in MemoryX.
StepPlan build_weight_streaming_step(const topology::Topology& topo, const CerebrasWorkload& cw,
                                     int micro_batch);
StepPlan describe_weight_streaming_step(const topology::Topology& topo, const CerebrasWorkload& cw,
                                        int micro_batch);

}  // namespace podsim::workload
