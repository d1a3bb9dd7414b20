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
// the fp8 family, the quantized copies Transformer Engine caches for the GEMMs (quantized_copy_bytes).
double weight_bytes(const TrainingConfig& t);
// Bytes per element of the quantized copies of one GEMM operand: row-wise for the GEMM that contracts its
// columns, column-wise for the backward one. fp8: one byte, two on devices whose fp8 GEMMs take only the
// TN layout (fp8_transposed_copies: a transpose); mxfp8 / fp8_block / nvfp4: both block layouts with their
// scales (the column-wise blocks are quantized from the 16-bit tensor, not transposed). 0 outside fp8.
double quantized_copy_bytes(const TrainingConfig& t);
// Bytes per element of a GEMM operand as a tensor-parallel all-gather moves it: Transformer Engine gathers
// the row-wise quantized data with its scales under the fp8 family (its quantizers gather row-wise only:
// the column-wise copy is made or gathered separately where the backward needs it), the 16-bit tensor
// otherwise.
double gathered_operand_bytes(const TrainingConfig& t);
// Who wrote a GEMM input. Megatron-Core runs the norms before QKV and fc1 inside Transformer Engine's
// LayerNormLinear, whose norm kernel can quantize (or reduce the amax of) its own output; every other
// input (attention output, MLP activation, gradients, weights) is quantized by a kernel of its own.
enum class GemmInput { fused_norm_output, other };
// HBM bytes per element of the kernels Transformer Engine runs to quantize one GEMM input of the fp8
// family, beyond the 16-bit tensor its producer wrote; 0 for 16-bit GEMMs. Every operand is needed
// row-wise (this GEMM) and column-wise (the backward GEMM that contracts the other dimension):
// - fp8, delayed scaling: read the input, write fp8, and on devices whose fp8 GEMMs take only the TN
//   layout (fp8_transposed_copies: Hopper) its transpose; a fused norm already wrote fp8 (fused_norm_bytes),
//   leaving only that transpose (read, write).
// - fp8, current scaling: the same plus one more read of the input for its amax, except after a fused
//   norm, which reduces the amax while it writes (and the input is then read once to cast it).
// - mxfp8: read, write both the row-wise and the column-wise 1x32 blocks (each fp8 + one E8M0 scale byte
//   per 32); no amax pass. fp8_block: both 1x128 blocks with an fp32 scale per 128. nvfp4: both 1x16
//   blocks (fp4 + one E4M3 scale per 16) after a per-tensor amax pass (its second-level scale).
double quantize_bytes_per_element(const TrainingConfig& t, GemmInput input = GemmInput::other);
// Bytes per element a norm fused with the linear after it writes: fp8 under delayed scaling (its kernel
// quantizes), the 16-bit activation otherwise.
double fused_norm_bytes(const TrainingConfig& t);
// Bytes of a dropout mask element: 1 with model.dropout > 0; 0 without, where torch's dropout returns its
// input and neither a mask nor a dropout kernel exists.
double dropout_mask_bytes(const ModelConfig& m);
// HBM bytes of a dropout kernel (or its backward) over `elements` of `eb` bytes: read them, write them, and
// the mask of `mask_bytes` each (written forward, read backward); 0 without dropout (mask_bytes 0).
double dropout_kernel_bytes(double elements, double eb, double mask_bytes);

}  // namespace podsim::workload
