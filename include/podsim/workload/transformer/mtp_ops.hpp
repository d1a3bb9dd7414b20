// Kernels of DeepSeek-V3's multi-token prediction modules (model.mtp_layers; DeepSeek-V3, arXiv 2412.19437,
// Sec. 2.2; Megatron-Core megatron/core/transformer/multi_token_prediction.py, MultiTokenPredictionLayer) on
// the last pipeline stage, where Megatron-Core places them beside the output layer. Per module and
// microbatch: the shared embedding of the tokens one further ahead, RMSNorms of it and of the previous
// hidden state (enorm, hnorm), their concatenation projected 2h -> h by eh_proj (column-parallel, then
// all-gathered over TP: gather_from_tensor_model_parallel_region), one transformer layer, a final norm,
// the shared output head and its cross-entropy loss.
#pragma once

#include "podsim/calibration/compute_model.hpp"
#include "podsim/workload/transformer/layer_ops.hpp"

namespace podsim::workload {

// Appends every MTP module's forward to c.output_forward and its backward to c.output_backward (called by
// head_costs, after the main output layer's kernels are in `c`). Their TP collectives are listed with the
// output layer's (not overlapped with GEMMs under parallel.tp_overlap).
void add_mtp_costs(HeadCosts& c, const WorkloadConfig& w, int micro_batch,
                   const calibration::ComputeModel& cm);

// Activation bytes the MTP modules keep on the last stage for one microbatch: each module's layer (as the
// main layers, for the recomputation chosen), its norm and eh_proj inputs and its own logits.
double mtp_activation_bytes(const WorkloadConfig& w, int micro_batch);

}  // namespace podsim::workload
