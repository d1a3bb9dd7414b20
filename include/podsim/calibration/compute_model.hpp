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

#include <memory>
#include <string>

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
  double element_bytes = 2;  // operand size (2 for fp16/bf16, 1 for the fp8 formats)
  std::string format = "";   // GEMM format name ("bf16", "fp8", ...): selects gemm.format_efficiency
  // 16-bit tensor peak for kernels that stay in bf16/fp16 whatever the GEMM format (fused attention:
  // NeMo/Megatron-Core keep fp8_dot_product_attention off by default). 0 = peak_flops.
  double attention_peak_flops = 0;
};

// One fused attention kernel call (FlashAttention): `batch_heads` independent (query, key) pairs per rank;
// with context parallelism q_len = s/cp and kv_len = s; GQA changes only the K/V bytes (kv_heads).
struct AttentionShape {
  double batch_heads = 0;  // micro_batch x query heads on this rank
  double q_len = 0, kv_len = 0, head_dim = 0;
  double kv_batch_heads = 0;  // micro_batch x KV heads on this rank (0 = batch_heads)
  double element_bytes = 2;
  bool causal = true;
  // Sliding-window attention (causal): each query sees itself and the window - 1 keys before it; the
  // kernel skips the blocks outside that band. 0 = no window.
  double window = 0;
};

struct AttentionEstimate {
  double flops = 0;  // matmul FLOPs executed by the kernel
  double bytes = 0;  // HBM traffic
  double seconds = 0;
};

class ComputeModel {
 public:
  ComputeModel(DeviceProfile profile, DeviceRates rates);

  GemmEstimate gemm(const GemmShape& shape) const;
  // A streaming kernel that reads and writes `bytes` in total.
  double memory_op(double bytes) const;
  // FlashAttention forward: S = QK^T and O = PV (4*q*kv*d per head, the causal mask skips the upper
  // triangle: half plus the diagonal blocks); reads Q, K, V, writes O and the logsumexp, no s x s tensor.
  AttentionEstimate fused_attention_forward(const AttentionShape& a) const;
  // Backward: recomputes S = QK^T and P inside the kernel, then dV = P^T dO, dP = dO V^T, dQ = dS K,
  // dK = dS^T Q: 5 matmuls against the forward's 2 (2.5x its FLOPs); reads Q, K, V, O, dO, logsumexp,
  // writes dQ, dK, dV.
  AttentionEstimate fused_attention_backward(const AttentionShape& a) const;
  double kernel_overhead() const { return profile_->kernel_overhead_s; }
  double achieved_memory_bandwidth() const { return rates_.hbm_bandwidth * profile_->memory_efficiency; }
  const DeviceProfile& profile() const { return *profile_; }
  // The same device running 16-bit GEMMs (attention_peak_flops, 2-byte operands): for the kernels that
  // stay in bf16 under an fp8 GEMM format (the unfused attention core). Itself when already 16-bit or wider.
  ComputeModel sixteen_bit() const;
  // The same device with `sms` fewer SMs for the kernel (a communication kernel holds them: Transformer
  // Engine's userbuffers launch the GEMM beside it with an SM margin); at least one SM stays.
  ComputeModel without_sms(int sms) const;
  // The same device running its GEMMs with the split fp32 accumulator (Transformer Engine's dgrad and
  // wgrad GEMMs under fp8): the main loop scaled by the profile's gemm.split_accumulator_efficiency of the
  // format in use (1 where the format has no fast-accumulation mode). Memory-bound and attention kernels
  // are unchanged; sixteen_bit() of the result is plain 16-bit again.
  ComputeModel with_split_accumulator() const;
  bool split_accumulator() const { return split_accumulator_; }
  // The same model remembering the GEMMs it times, its variants (sixteen_bit, without_sms, ...) sharing the
  // memory: for a caller that times the same shapes over and over (a plan search bounds hundreds of
  // thousands of candidates whose layers repeat a few hundred shapes). Answers are the unmemoized ones.
  // Not thread-safe: one memo per thread (podsim's parallel searches run in processes).
  ComputeModel with_gemm_memo() const;
  int sm_count() const { return rates_.sm_count; }
  const DeviceRates& rates() const { return rates_; }

 private:
  class GemmMemo;
  // Variants keep the profile and the memo of the model they derive from.
  ComputeModel(std::shared_ptr<const DeviceProfile> profile, DeviceRates rates,
               std::shared_ptr<GemmMemo> memo = nullptr);
  GemmEstimate time_gemm(const GemmShape& shape) const;
  double gemm_time(const GemmShape& s, const GemmTile& tile, int split, double* waves_out) const;
  // Shared by the variants (sixteen_bit, without_sms, ...): a plan search derives them for every GEMM of
  // every candidate, and copying the profile's tables each time was a quarter of its bound.
  std::shared_ptr<const DeviceProfile> profile_;
  DeviceRates rates_;
  std::shared_ptr<GemmMemo> memo_;  // null: every call timed afresh
  AttentionEstimate fused_attention(const AttentionShape& a, double flops, double bytes, double eff) const;
  // The profile's shape terms for this call (FusedAttentionParams): causal, head width, and the loop each
  // thread block runs (forward: a query block over the keys; backward: a key block over the queries).
  double attention_shape_scale(const AttentionShape& a, bool forward) const;
  double per_sm_flops_;  // sustained per-SM tensor peak
  double mainloop_;      // main-loop efficiency of the GEMM format in use
  bool split_accumulator_ = false;
};

// The main-loop efficiency that makes the model reproduce a measured GEMM throughput at one shape
// (bisection; the model is monotone in it). Used to calibrate from a microbenchmark or published scan.
double fit_mainloop_efficiency(const DeviceProfile& profile, const DeviceRates& rates, const GemmShape& shape,
                               double measured_flops_per_s);

}  // namespace podsim::calibration
