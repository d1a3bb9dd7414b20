// Time of compute kernels on one device.
//
// GEMMs: the library tiles C into thread-block tiles, runs them in waves over the SMs and picks the
// fastest tile shape (and split-K for GEMMs too small to fill the device). A wave costs the main loop
// (2*Mt*Nt*K flop at the per-SM peak times the main-loop efficiency, reduced when the tile's arithmetic
// intensity cannot keep the tensor cores fed) plus a fixed prologue/epilogue. Wave and tile quantization
// therefore come out of the shapes, not out of a per-shape table. Every kernel is also bounded below by
// its HBM traffic (roofline) and pays a launch overhead.
//
// Memory-bound kernels (layer norm, softmax, dropout, GeLU, optimizer): bytes / achieved HBM bandwidth.
#pragma once

#include "podsim/calibration/device_profile.hpp"

namespace podsim::calibration {

struct GemmShape {
  double m = 0, n = 0, k = 0;
  double batch = 1;  // independent GEMMs of this shape in one batched kernel
};

struct GemmEstimate {
  double seconds = 0;
  GemmTile tile;
  int split_k = 1;
  double waves = 0;
  bool memory_bound = false;
  double tflops() const;  // achieved, for reporting
  double flops = 0;
};

struct DeviceRates {
  double peak_flops = 0;     // datasheet peak for the precision in use
  double hbm_bandwidth = 0;  // datasheet bytes/s
  int sm_count = 0;
  double element_bytes = 2;  // operand size (2 for fp16/bf16)
};

class ComputeModel {
 public:
  ComputeModel(DeviceProfile profile, DeviceRates rates);

  GemmEstimate gemm(const GemmShape& shape) const;
  // A streaming kernel that reads and writes `bytes` in total.
  double memory_op(double bytes) const;
  double kernel_overhead() const { return profile_.kernel_overhead_s; }
  double achieved_memory_bandwidth() const { return rates_.hbm_bandwidth * profile_.memory_efficiency; }
  const DeviceProfile& profile() const { return profile_; }
  const DeviceRates& rates() const { return rates_; }

 private:
  double gemm_time(const GemmShape& s, const GemmTile& tile, int split, double* waves_out) const;
  DeviceProfile profile_;
  DeviceRates rates_;
  double per_sm_flops_;  // sustained per-SM tensor peak
};

// The main-loop efficiency that makes the model reproduce a measured GEMM throughput at one shape
// (bisection; the model is monotone in it). Used to calibrate from a microbenchmark or published scan.
double fit_mainloop_efficiency(const DeviceProfile& profile, const DeviceRates& rates, const GemmShape& shape,
                               double measured_flops_per_s);

}  // namespace podsim::calibration
