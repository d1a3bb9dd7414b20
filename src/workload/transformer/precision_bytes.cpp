#include "podsim/workload/transformer/precision_bytes.hpp"

namespace podsim::workload {

bool is_fp8_family(topology::Precision p) {
  using topology::Precision;
  return p == Precision::fp8 || p == Precision::fp8_block || p == Precision::mxfp8 || p == Precision::nvfp4;
}

double activation_bytes(const TrainingConfig& t) {
  return activation_bytes(t.precision);
}

double activation_bytes(topology::Precision p) {
  return is_fp8_family(p) ? 2.0 : topology::bytes_per_element(p);
}

double weight_bytes(const TrainingConfig& t) {
  return activation_bytes(t) + quantized_copy_bytes(t);
}

namespace {

// One layout (row-wise or column-wise) of a quantized GEMM operand: its data and its block scales.
double one_layout_bytes(const TrainingConfig& t) {
  using topology::Precision;
  const double q = topology::bytes_per_element(t.precision);
  switch (t.precision) {
    case Precision::fp8: return q;                    // one scale per tensor
    case Precision::fp8_block: return q + 4.0 / 128;  // an fp32 scale per 128
    case Precision::mxfp8: return q + 1.0 / 32;       // an E8M0 scale byte per 32
    case Precision::nvfp4: return q + 1.0 / 16;       // an E4M3 scale byte per 16
    default: return 0;
  }
}

bool norm_writes_fp8(const TrainingConfig& t) {
  return t.precision == topology::Precision::fp8 && t.fp8_recipe == Fp8Recipe::delayed;
}

}  // namespace

double quantized_copy_bytes(const TrainingConfig& t) {
  bool one_layout = t.precision == topology::Precision::fp8 && !t.fp8_transposed_copies;
  return (one_layout ? 1 : 2) * one_layout_bytes(t);
}

double gathered_operand_bytes(const TrainingConfig& t) {
  return is_fp8_family(t.precision) ? one_layout_bytes(t) : activation_bytes(t);
}

double quantize_bytes_per_element(const TrainingConfig& t, GemmInput input) {
  using topology::Precision;
  if (!is_fp8_family(t.precision)) return 0;
  const double eb = activation_bytes(t), copies = quantized_copy_bytes(t);
  const bool fused_norm = input == GemmInput::fused_norm_output;
  // The norm wrote the row-wise fp8 itself; a transpose kernel reads it and writes the column-wise copy.
  if (fused_norm && norm_writes_fp8(t)) return 2 * (copies - one_layout_bytes(t));
  // One read to cast; one more for the amax where nothing computed it on the way (a fused norm does).
  bool amax_pass = (t.precision == Precision::fp8 && t.fp8_recipe == Fp8Recipe::current && !fused_norm) ||
                   t.precision == Precision::nvfp4;
  return (amax_pass ? 2 : 1) * eb + copies;
}

double fused_norm_bytes(const TrainingConfig& t) {
  return norm_writes_fp8(t) ? topology::bytes_per_element(t.precision) : activation_bytes(t);
}

double dropout_mask_bytes(const ModelConfig& m) {
  return m.dropout > 0 ? 1 : 0;
}

double dropout_kernel_bytes(double elements, double eb, double mask_bytes) {
  return mask_bytes > 0 ? elements * (2 * eb + mask_bytes) : 0;
}

}  // namespace podsim::workload
