// What a compute device is on paper: peak arithmetic per precision and its memory. These are datasheet
// facts, written in the topology YAML with their sources; how close real kernels get to them is a
// calibration matter (see calibration/device_profile.hpp).
#pragma once

#include <map>
#include <string>

#include "podsim/core/names.hpp"

namespace podsim::topology {

enum class Precision { fp32, tf32, fp16, bf16, fp8 };
inline constexpr auto kPrecisionNames = name_table<Precision>({{Precision::fp32, "fp32"},
                                                               {Precision::tf32, "tf32"},
                                                               {Precision::fp16, "fp16"},
                                                               {Precision::bf16, "bf16"},
                                                               {Precision::fp8, "fp8"}});

const char* to_string(Precision p);
Precision parse_precision(const std::string& name);  // throws std::invalid_argument
double bytes_per_element(Precision p);               // 4 for fp32/tf32, 2 for fp16/bf16, 1 for fp8

struct DeviceSpec {
  std::string name;
  std::map<Precision, double> peak_flops;  // flop/s, dense (no structured sparsity)
  double hbm_bytes = 0;                    // device memory capacity
  double hbm_bandwidth = 0;                // bytes/s
  int sm_count = 0;                        // streaming multiprocessors (or cores) for wave quantization
  std::string profile_path;                // calibration profile, resolved to an absolute path

  // Throws InputError naming the device when it has no peak for that precision.
  double peak(Precision p) const;
};

}  // namespace podsim::topology
