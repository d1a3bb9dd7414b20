// Bytes per element of the tensors of a transformer step under a training precision. FP8 formats (fp8 and,
// merged from the kernels work, fp8_block / mxfp8 / nvfp4) are GEMM formats only, as Transformer Engine
// runs them: GEMM inputs are quantized just before each GEMM, while activations, norms, element-wise
// kernels, tensor-parallel collectives, pipeline transfers and gradients stay in bf16.
#pragma once

#include "podsim/topology/device_spec.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {

// True for the formats Transformer Engine uses only inside GEMMs.
bool is_fp8_family(topology::Precision p);
// Bytes of an activation element (and of everything that is not a GEMM operand): 2 (bf16) for the fp8
// family, the precision's own size otherwise.
double activation_bytes(const TrainingConfig& t);
double activation_bytes(topology::Precision p);  // the same, for a precision not yet in a TrainingConfig
// Bytes per parameter of the weights held for compute: the model's weights in activation_bytes plus, for
// the fp8 family, the quantized copy Transformer Engine caches for the GEMMs (1 byte).
double weight_bytes(const TrainingConfig& t);
// Bytes of a GEMM operand after quantization (1 for fp8) and of the quantize kernel that makes it: read
// the bf16 input, write the quantized copy and (for the wgrad GEMM, whose operands Hopper's FP8 tensor
// cores need transposed) a transposed quantized copy, with the amax reduction fused in.
double quantize_bytes_per_element(const TrainingConfig& t);
// Bytes of a dropout mask element: 1 with model.dropout > 0; 0 without, where torch's dropout returns its
// input and neither a mask nor a dropout kernel exists.
double dropout_mask_bytes(const ModelConfig& m);
// HBM bytes of a dropout kernel (or its backward) over `elements` of `eb` bytes: read them, write them, and
// the mask of `mask_bytes` each (written forward, read backward); 0 without dropout (mask_bytes 0).
double dropout_kernel_bytes(double elements, double eb, double mask_bytes);

}  // namespace podsim::workload
