// The per-step cast of the transformer layers' weights to fp8 under the fp8 formats.
#pragma once

#include "podsim/calibration/compute_model.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {

// Seconds one pipeline stage spends casting its transformer layers' GEMM weights (this rank's tp shard)
// to fp8 once per step: Megatron-Core calls set_is_first_microbatch() on the first microbatch and
// Transformer Engine then quantizes each linear's bf16 weight (with the column-wise copy the dgrad GEMM
// needs and, under current scaling, the amax pass first: quantize_bytes_per_element) and reuses that cached
// copy for the other microbatches. One kernel per linear. The output layer and the embedding stay in bf16
// (not TE modules). 0 outside the fp8 family or for a stage without layers.
double fp8_weight_cast_seconds(const WorkloadConfig& w, int stage, const calibration::ComputeModel& cm);

}  // namespace podsim::workload
