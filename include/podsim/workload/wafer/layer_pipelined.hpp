// Cerebras layer-pipelined execution: the whole model resident on one wafer (weights, gradients and
// optimizer state in SRAM), each block (embedding, every layer, the output head) on its own rectangle of
// the mesh (wafer_placement.hpp), micro-batches flowing through the blocks as a pipeline (1F1B), the
// activations and their gradients crossing the shared edge between neighbouring rectangles. Throughput is
// set by the slowest rectangle and the mesh bandwidth of the boundaries; the pipeline fills and drains
// once per step, then every region updates its own weights in place.
//
// With several systems each runs the whole pipeline on its share of the batch and the gradients are
// all-reduced through the SwarmX tree before the update (podsim's extension: Cerebras documents
// multi-system training for weight streaming).
#pragma once

#include <optional>

#include "podsim/topology/topology.hpp"
#include "podsim/workload/step_plan.hpp"
#include "podsim/workload/wafer/cerebras_config.hpp"
#include "podsim/workload/wafer/wafer_placement.hpp"

namespace podsim::workload {

// The placement for a micro-batch, or nothing when the model does not fit on the wafer that way.
std::optional<Placement> layer_pipelined_placement(const topology::Topology& topo, const WorkloadConfig& w,
                                                   int micro_batch);

// Throws InfeasibleConfig("out_of_memory") when the model does not fit on one wafer.
StepPlan build_layer_pipelined_step(const topology::Topology& topo, const CerebrasWorkload& cw,
                                    int micro_batch);
StepPlan describe_layer_pipelined_step(const topology::Topology& topo, const CerebrasWorkload& cw,
                                       int micro_batch);

}  // namespace podsim::workload
