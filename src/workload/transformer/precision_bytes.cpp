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
  double copy = is_fp8_family(t.precision) ? topology::bytes_per_element(t.precision) : 0.0;
  return activation_bytes(t) + copy;
}

double quantize_bytes_per_element(const TrainingConfig& t) {
  if (!is_fp8_family(t.precision)) return 0;
  double q = topology::bytes_per_element(t.precision);
  return activation_bytes(t) + 2 * q;  // read bf16; write the quantized copy and its transpose
}

double dropout_mask_bytes(const ModelConfig& m) {
  return m.dropout > 0 ? 1 : 0;
}

double dropout_kernel_bytes(double elements, double eb, double mask_bytes) {
  return mask_bytes > 0 ? elements * (2 * eb + mask_bytes) : 0;
}

}  // namespace podsim::workload
