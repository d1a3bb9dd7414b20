// `podsim calibrate fit` as library functions: calib-gemm and calib-memory CSVs plus the device's
// datasheet facts (a topology's device section, then flags) -> a compute profile with provenance, the
// report the command prints, and the checked profile file.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "podsim/fit/device_fit.hpp"

namespace podsim::fit {

struct DeviceFitRequest {
  std::string gemm_csv;                                            // written by calib-gemm
  std::string memory_csv;                                          // written by calib-memory
  std::string device;                                              // name written into the profile
  std::string topology;                                            // "" = datasheet facts from the flags only
  std::vector<std::pair<std::string, std::string>> topology_sets;  // overrides of the topology's keys
  std::vector<std::string> peak_tflops;                            // "DTYPE=TFLOPS", over the topology's
  double hbm_GBps = 0;                                             // 0 = the topology's
  std::string base;  // profile whose unfitted values are kept; "" = the topology's (or built-in defaults)
  std::vector<std::string> fitted_dtypes = {"bf16", "fp16"};
  int holdout_every = 5;
  std::string out;  // where the profile will be written; only quoted in provenance here
};

struct DeviceCalibration {
  DeviceFitRequest request;
  calibration::DeviceFitResult fit;  // fit.profile is named after request.device and has its provenance
  std::string machine;               // measured device, host, SM count, driver and library versions
  std::size_t gemm_rows = 0;
  std::size_t memory_rows = 0;
};

// Reads the CSVs and the datasheet facts and fits. Throws InputError on bad input (unreadable CSV,
// malformed --peak-tflops, an SM count that contradicts the topology, missing datasheet facts).
DeviceCalibration calibrate_device(const DeviceFitRequest& request);

// What `podsim calibrate fit` prints: fitted parameters, memory kernel efficiencies, error per class
// for the final fit and the hold-out fit.
std::string device_fit_report(const DeviceCalibration& calibration);

// Writes the profile to `path` once podsim's own loader accepts it.
void write_device_profile(const std::string& path, const DeviceCalibration& calibration);

// --peak-tflops items ("bf16=989") -> flop/s per dtype. Throws InputError naming the bad item.
std::map<std::string, double> parse_peak_tflops(const std::vector<std::string>& items);

}  // namespace podsim::fit
