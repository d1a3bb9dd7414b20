// How close real kernels come to a device's datasheet peaks. The handful of parameters here are fitted
// from microbenchmarks (calibration/ tools) or, where no measurement exists yet, derived from published
// measurements; each profile file records which.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "podsim/calibration/provenance.hpp"

namespace podsim::calibration {

struct GemmTile {
  int m = 0, n = 0;
};

struct GemmParams {
  // Fraction of the per-SM tensor peak the GEMM main loop sustains when its tile is fed fast enough.
  double mainloop_efficiency = 0.85;
  // Arithmetic intensity (flop per byte loaded into shared memory) a tile needs to keep tensor cores
  // busy; smaller tiles fall short proportionally. Models why 64x64 tiles are slower than 256x128.
  double required_tile_intensity = 40;
  // Fixed cost per wave of tiles (prologue: filling the software pipeline; epilogue: writing C).
  double wave_overhead_s = 1.5e-6;
  // Tile shapes the GEMM library chooses among (it picks the fastest for each shape).
  std::vector<GemmTile> tiles;
  // Largest split-K factor the library uses for GEMMs that cannot fill the device.
  int max_split_k = 4;
  // Main-loop efficiency of a narrower GEMM format relative to mainloop_efficiency (profile key
  // gemm.format_efficiency: {fp8: 0.95}): scaling factors and a higher tensor rate at the same power
  // budget cost a share of the datasheet ratio. A format not listed runs at 1.0.
  std::map<std::string, double> format_efficiency;
  double format_scale(const std::string& format) const {
    auto it = format_efficiency.find(format);
    return it == format_efficiency.end() ? 1.0 : it->second;
  }
  // Main-loop efficiency of a GEMM format run with the split (periodically promoted) fp32 accumulator,
  // relative to its fast accumulation (profile key gemm.split_accumulator_efficiency: {fp8: 0.87}).
  // Hopper's fp8 tensor cores accumulate in reduced precision; cuBLASLt's default (CUBLASLT_MATMUL_DESC_
  // FAST_ACCUM 0) promotes the partial sums to fp32 registers every few k-steps, which costs main-loop
  // time. A format not listed has no such mode (Blackwell accumulates in full fp32): 1.0.
  std::map<std::string, double> split_accumulator_efficiency;
  double split_accumulator_scale(const std::string& format) const {
    auto it = split_accumulator_efficiency.find(format);
    return it == split_accumulator_efficiency.end() ? 1.0 : it->second;
  }
};

// A fused attention kernel (FlashAttention-2/-3, cuDNN fused attention): the fraction of the 16-bit tensor
// peak its matmul FLOPs sustain, forward and backward (profile keys attention.forward_efficiency,
// attention.backward_efficiency). `available` is false when the profile has no attention section.
//
// Optional shape terms (absent = 1, the efficiencies then hold for every shape):
//  causal_efficiency    the causal kernel's efficiency relative to the non-causal one at the same work
//                       (its masked diagonal blocks and scheduling);
//  block_overhead       per pass, the fixed cost of one thread block (loading its query or key block,
//                       writing its output) in units of one 128 x 128 block of the loop it runs: a kernel
//                       whose blocks loop over n blocks reaches n / (n + overhead) of its efficiency, which
//                       is why short sequences run slower;
//  head_dim_efficiency  per pass, the efficiency at a head width relative to the listed widths' (the softmax
//                       and rescaling work per block does not shrink with the head), interpolated in log2 of
//                       the width and held constant beyond the table.
//
// A kernel library gets faster from release to release (cuDNN's fused attention on Hopper by ~20% between
// mid-2024 and early 2026), so the numbers describe one release, named by `library`; a profile may list
// older releases under attention.releases (each key it gives replaces the newest release's), and a
// workload picks one with training.attention_library (with_attention_library below).
struct FusedAttentionParams {
  bool available = false;
  std::string kernel;   // "FlashAttention-2", "FlashAttention-3", "cuDNN fused attention", ...
  std::string library;  // the library release the numbers describe, e.g. "cudnn-9.19" ("" = unnamed)
  double forward_efficiency = 0;
  double backward_efficiency = 0;
  double causal_efficiency = 1;
  double forward_block_overhead = 0, backward_block_overhead = 0;
  std::map<double, double> forward_head_dim_efficiency, backward_head_dim_efficiency;
  double head_dim_scale(bool forward, double head_dim) const;
};

struct DeviceProfile {
  std::string device;
  std::string file;
  GemmParams gemm;
  FusedAttentionParams attention;                                  // the newest release measured
  std::map<std::string, FusedAttentionParams> attention_releases;  // older ones, by library name
  double memory_efficiency = 0.85;    // achieved / datasheet HBM bandwidth for streaming kernels
  double kernel_overhead_s = 4e-6;    // launch + tail per kernel, paid by every op
  double clock_sustain_factor = 1.0;  // sustained (power-limited) / boost clock under training load
  double framework_memory_bytes = 0;  // CUDA context, library workspaces, allocator slack
  // Compute kernels run this much slower while communication kernels share the device (NCCL's channels
  // occupy SMs and move their bytes through HBM); >= 1, 1 = no contention. Applied only to compute the
  // schedule overlaps with communication.
  double overlap_compute_slowdown = 1.0;
  std::vector<Provenance> provenance;
};

DeviceProfile load_device_profile(const std::string& path);

// The profile with the attention numbers of library release `library` ("latest" or the newest release's
// own name: unchanged). Throws std::invalid_argument naming the releases the profile lists otherwise.
DeviceProfile with_attention_library(const DeviceProfile& profile, const std::string& library);
// "latest", then the newest release's name and the older ones': what training.attention_library accepts.
std::vector<std::string> attention_library_names(const DeviceProfile& profile);

}  // namespace podsim::calibration
