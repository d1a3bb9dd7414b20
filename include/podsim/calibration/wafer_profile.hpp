// How close a wafer-scale engine gets to its datasheet peaks, and how its runtime streams weights. The
// counterpart of device_profile.hpp for Cerebras WSE devices, whose cores are not GPU SMs: there are no
// thread-block tiles, kernels are spread over a rectangle of the 2D core mesh.
#pragma once

#include <string>
#include <vector>

#include "podsim/calibration/provenance.hpp"

namespace podsim::calibration {

struct WaferProfile {
  std::string device;
  std::string file;
  // Fraction of a core's fp16 FMAC peak that the inner loop of a matrix multiply sustains once its
  // operands are in place (weights arriving over the fabric, activations in local SRAM).
  double gemm_efficiency = 0.8;
  // Achieved fraction of the SRAM bandwidth for element-wise kernels (norms, softmax, GeLU, dropout).
  double sram_efficiency = 0.5;
  // Fixed cost of each kernel on a region (instruction dispatch, the first wavelets crossing the region).
  double kernel_overhead_s = 2e-6;
  // SRAM the compiled program, routing tables and runtime buffers take, as a fraction of the wafer's SRAM.
  double sram_reserved_fraction = 0.1;
  // How many blocks (layers) ahead of the compute the weight stream may run (1 = double buffering).
  int stream_prefetch_blocks = 1;
  // Achieved fraction of MemoryX's memory bandwidth in the optimizer's weight update.
  double update_efficiency = 0.8;
  std::vector<Provenance> provenance;
};

WaferProfile load_wafer_profile(const std::string& path);

}  // namespace podsim::calibration
