// What a compute device is on paper: peak arithmetic per precision and its memory. These are datasheet
// facts, written in the topology YAML with their sources; how close real kernels get to them is a
// calibration matter (see calibration/device_profile.hpp).
#pragma once

#include <map>
#include <string>

#include "podsim/core/names.hpp"

namespace podsim::topology {

// GEMM operand formats. fp8 = Transformer Engine's per-tensor scaling (delayed or current:
// training.fp8_recipe); fp8_block = 1x128 / 128x128 block scaling (Hopper: cuBLAS 12.9, DeepSeek-V3 style);
// mxfp8 and nvfp4 = the OCP MX and NVIDIA block-scaled formats Blackwell's tensor cores run natively. A
// device supports a format when its topology gives a peak for it.
enum class Precision { fp32, tf32, fp16, bf16, fp8, fp8_block, mxfp8, nvfp4 };
inline constexpr auto kPrecisionNames = name_table<Precision>({{Precision::fp32, "fp32"},
                                                               {Precision::tf32, "tf32"},
                                                               {Precision::fp16, "fp16"},
                                                               {Precision::bf16, "bf16"},
                                                               {Precision::fp8, "fp8"},
                                                               {Precision::fp8_block, "fp8_block"},
                                                               {Precision::mxfp8, "mxfp8"},
                                                               {Precision::nvfp4, "nvfp4"}});

// GPU generation (topology `device.architecture`): decides framework defaults that follow the hardware,
// e.g. FlashAttention on by default from Hopper on. `unknown` when a topology does not say.
enum class Architecture { unknown, volta, ampere, hopper, blackwell };
inline constexpr auto kArchitectureNames = name_table<Architecture>({{Architecture::unknown, "unknown"},
                                                                     {Architecture::volta, "volta"},
                                                                     {Architecture::ampere, "ampere"},
                                                                     {Architecture::hopper, "hopper"},
                                                                     {Architecture::blackwell, "blackwell"}});

const char* to_string(Precision p);
Precision parse_precision(const std::string& name);  // throws std::invalid_argument
double bytes_per_element(Precision p);  // 4 fp32/tf32, 2 fp16/bf16, 1 fp8/fp8_block/mxfp8, 0.5 nvfp4

struct DeviceSpec {
  std::string name;
  std::map<Precision, double> peak_flops;  // flop/s, dense (no structured sparsity)
  double hbm_bytes = 0;                    // device memory capacity
  double hbm_bandwidth = 0;                // bytes/s
  int sm_count = 0;                        // streaming multiprocessors (or cores) for wave quantization
  std::string profile_path;                // calibration profile, resolved to an absolute path
  Architecture architecture = Architecture::unknown;  // gpu_cluster `device.architecture`

  // Throws InputError naming the device when it has no peak for that precision.
  double peak(Precision p) const;
};

}  // namespace podsim::topology
