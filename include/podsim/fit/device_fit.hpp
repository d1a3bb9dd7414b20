// Device calibration: fits the compute model's few parameters to calib-gemm and calib-memory
// measurements by least squares on the relative error of every kernel time.
//
// Fitted: gemm.mainloop_efficiency, gemm.required_tile_intensity, gemm.wave_overhead, kernel_overhead and
// memory.bandwidth_efficiency (the model's tile/wave/roofline structure turns them into a time for any
// shape; see compute_model.hpp). clock_sustain_factor comes from the benchmark's burst-vs-sustained pair
// when present (short runs measure at boost clock, training runs at the power-limited clock), otherwise it
// is kept from the base profile, as are the tile list, split-K limit and framework memory.
//
// Honest quality report: the error per shape class of the final fit over all rows, and of a fit that
// never saw every Nth row of each class, predicting those rows (hold-out).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "podsim/calibration/compute_model.hpp"
#include "podsim/calibration/device_profile.hpp"
#include "podsim/fit/fit_error.hpp"
#include "podsim/fit/kernel_measurements.hpp"

namespace podsim::calibration {

struct DeviceFitOptions {
  // Datasheet rates per GEMM dtype ("bf16", "fp16", "fp8"); rows of other dtypes are skipped.
  std::map<std::string, DeviceRates> rates;
  // GEMM dtypes the single main-loop efficiency is fitted to; other dtypes with rates are only evaluated.
  std::vector<std::string> fitted_dtypes = {"bf16", "fp16"};
  // Memory kernels that stand for the memory-bound ops podsim costs (layer norm, softmax, dropout, GeLU,
  // optimizer); copy/read/write are evaluated (they show the achievable ceiling) but not fitted.
  std::vector<std::string> memory_op_kernels = {"elementwise", "layernorm", "softmax"};
  int holdout_every = 5;  // every Nth row of each class is held out of the hold-out fit (0: none)
};

struct DeviceFitResult {
  DeviceProfile profile;  // base profile with the fitted values
  ErrorTable in_sample;   // final fit (all rows) vs measurements, per class ("gemm square", "memory softmax")
  ErrorTable holdout;     // fit without the held-out rows, predicting them
  int fitted_rows = 0;
  int holdout_rows = 0;
  std::map<std::string, double>
      memory_kernel_efficiency;                  // achieved / datasheet at each kernel's largest size
  std::optional<double> measured_clock_sustain;  // from burst/sustained rows
  std::vector<std::string> notes;
};

// Throws InputError when there is nothing to fit (no GEMM rows of a fitted dtype, no memory-op rows) or
// when a row's dtype has no datasheet rate and it is a fitted dtype.
DeviceFitResult fit_device_profile(const GemmMeasurements& gemm, const MemoryMeasurements& memory,
                                   const DeviceProfile& base, const DeviceFitOptions& options);

}  // namespace podsim::calibration
