#include "podsim/calibration/compute_model.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <unordered_map>

namespace podsim::calibration {

double GemmEstimate::tflops() const {
  return seconds > 0 ? flops / seconds / 1e12 : 0;
}

namespace {

std::shared_ptr<const DeviceProfile> with_default_tiles(DeviceProfile profile) {
  if (profile.gemm.tiles.empty()) profile.gemm.tiles = {{256, 128}, {128, 128}, {64, 64}};
  return std::make_shared<const DeviceProfile>(std::move(profile));
}

}  // namespace

// Keyed by the shape and by every rate the timing reads beside the (shared, immutable) profile, so that one
// memo serves a model and all its variants.
class ComputeModel::GemmMemo {
 public:
  struct Key {
    double m, n, k, batch, per_sm_flops, mainloop, element_bytes, hbm_bandwidth;
    int sm_count;
    bool operator==(const Key&) const = default;
  };
  struct Hash {
    size_t operator()(const Key& key) const {
      // A multiply-xorshift mix of the bits (std::hash<double> hashes the bytes, several times slower).
      uint64_t h = static_cast<uint64_t>(key.sm_count);
      for (double v : {key.m, key.n, key.k, key.batch, key.per_sm_flops, key.mainloop, key.element_bytes,
                       key.hbm_bandwidth}) {
        h = (h ^ std::bit_cast<uint64_t>(v + 0.0)) * 0x9E3779B97F4A7C15ull;  // + 0.0: -0 hashes as 0
        h ^= h >> 29;
      }
      return static_cast<size_t>(h);
    }
  };
  std::unordered_map<Key, GemmEstimate, Hash> estimates;
};

ComputeModel::ComputeModel(DeviceProfile profile, DeviceRates rates)
    : ComputeModel(with_default_tiles(std::move(profile)), std::move(rates)) {}

ComputeModel::ComputeModel(std::shared_ptr<const DeviceProfile> profile, DeviceRates rates,
                           std::shared_ptr<GemmMemo> memo)
    : profile_(std::move(profile)), rates_(std::move(rates)), memo_(std::move(memo)) {
  if (rates_.sm_count <= 0 || rates_.peak_flops <= 0 || rates_.hbm_bandwidth <= 0)
    throw std::invalid_argument("ComputeModel needs positive peak, bandwidth and SM count");
  per_sm_flops_ = rates_.peak_flops * profile_->clock_sustain_factor / rates_.sm_count;
  mainloop_ = profile_->gemm.mainloop_efficiency * profile_->gemm.format_scale(rates_.format);
}

ComputeModel ComputeModel::sixteen_bit() const {
  if (rates_.attention_peak_flops <= 0 || rates_.element_bytes >= 2) return *this;
  DeviceRates r = rates_;
  r.peak_flops = rates_.attention_peak_flops;
  r.element_bytes = 2;
  r.format = "bf16";
  return ComputeModel(profile_, r, memo_);
}

ComputeModel ComputeModel::without_sms(int sms) const {
  if (sms <= 0) return *this;
  DeviceRates r = rates_;
  r.sm_count = std::max(1, rates_.sm_count - sms);
  double share = static_cast<double>(r.sm_count) / rates_.sm_count;  // the per-SM rate stays
  r.peak_flops *= share;
  if (r.attention_peak_flops > 0) r.attention_peak_flops *= share;
  ComputeModel narrowed(profile_, r, memo_);
  return split_accumulator_ ? narrowed.with_split_accumulator() : narrowed;
}

ComputeModel ComputeModel::with_split_accumulator() const {
  if (split_accumulator_) return *this;
  ComputeModel m = *this;
  m.split_accumulator_ = true;
  m.mainloop_ *= profile_->gemm.split_accumulator_scale(rates_.format);
  return m;
}

double ComputeModel::gemm_time(const GemmShape& s, const GemmTile& tile, int split, double* waves_out) const {
  const auto& g = profile_->gemm;
  double tiles = std::ceil(s.m / tile.m) * std::ceil(s.n / tile.n) * split * s.batch;
  double waves = std::ceil(tiles / rates_.sm_count);
  double k_per_tile = std::ceil(s.k / split);
  // Flop per byte of operands staged through shared memory (2*Mt*Nt*kk flop over (Mt+Nt)*kk elements).
  double intensity = 2.0 * tile.m * tile.n / ((tile.m + tile.n) * rates_.element_bytes);
  // Narrower formats double the tensor rate per halving of the operand at the same shared-memory fill
  // rate, so the intensity a tile needs (profiled for 16-bit operands) grows by the same factor.
  double required = g.required_tile_intensity * std::max(1.0, 2.0 / rates_.element_bytes);
  double feed = std::min(1.0, intensity / required);
  double wave = 2.0 * tile.m * tile.n * k_per_tile / (per_sm_flops_ * mainloop_ * feed) + g.wave_overhead_s;
  double t = waves * wave;
  if (split > 1)  // partial sums in fp32, written and read back by a reduction kernel
    t += s.m * s.n * s.batch * split * 4.0 * 2 / achieved_memory_bandwidth() + profile_->kernel_overhead_s;
  if (waves_out) *waves_out = waves;
  return t;
}

ComputeModel ComputeModel::with_gemm_memo() const {
  ComputeModel m = *this;
  if (!m.memo_) m.memo_ = std::make_shared<GemmMemo>();
  return m;
}

GemmEstimate ComputeModel::gemm(const GemmShape& s) const {
  if (!memo_) return time_gemm(s);
  GemmMemo::Key key{s.m,
                    s.n,
                    s.k,
                    s.batch,
                    per_sm_flops_,
                    mainloop_,
                    rates_.element_bytes,
                    rates_.hbm_bandwidth,
                    rates_.sm_count};
  auto [it, added] = memo_->estimates.try_emplace(key);
  if (added) it->second = time_gemm(s);
  return it->second;
}

GemmEstimate ComputeModel::time_gemm(const GemmShape& s) const {
  GemmEstimate best;
  best.flops = 2.0 * s.m * s.n * s.k * s.batch;
  if (best.flops <= 0) return best;
  best.seconds = std::numeric_limits<double>::infinity();
  for (const auto& tile : profile_->gemm.tiles) {
    double tiles_mn = std::ceil(s.m / tile.m) * std::ceil(s.n / tile.n) * s.batch;
    for (int split = 1; split <= profile_->gemm.max_split_k; split *= 2) {
      if (split > 1 && (tiles_mn * split > 2.0 * rates_.sm_count || s.k / split < 256)) break;
      double waves = 0;
      double t = gemm_time(s, tile, split, &waves);
      if (t < best.seconds) {
        best.seconds = t;
        best.tile = tile;
        best.split_k = split;
        best.waves = waves;
      }
    }
  }
  // C is written in at least 16 bits (Transformer Engine's fp8 GEMMs output bf16).
  double traffic =
      ((s.m * s.k + s.k * s.n) * rates_.element_bytes + s.m * s.n * std::max(2.0, rates_.element_bytes)) *
      s.batch;
  double memory_time = traffic / achieved_memory_bandwidth();
  if (memory_time > best.seconds) {
    best.seconds = memory_time;
    best.memory_bound = true;
  }
  best.seconds += profile_->kernel_overhead_s;
  return best;
}

double ComputeModel::memory_op(double bytes) const {
  if (bytes <= 0) return 0;
  return bytes / achieved_memory_bandwidth() + profile_->kernel_overhead_s;
}

namespace {

// Share of the q x kv score blocks a causal kernel computes: the lower triangle of n x n tiles of 128
// rows (FlashAttention's block size), i.e. half plus the diagonal blocks, (n + 1) / 2n. Under a sliding
// window of W keys only the band: a query block's diagonal block and the ceil((W - 1) / 128) before it
// that reach into its rows' windows (fewer at the start of the sequence); with context parallelism
// (q_len < kv_len) every query block a full band.
double causal_fraction(const AttentionShape& a) {
  if (!a.causal) return 1;
  double n = std::max(1.0, std::ceil(std::min(a.q_len, a.kv_len) / 128));
  double triangle = (n + 1) / (2 * n);
  if (a.window <= 0) return triangle;
  double back = std::ceil((a.window - 1) / 128);
  double n_q = std::max(1.0, std::ceil(a.q_len / 128)), n_kv = std::max(1.0, std::ceil(a.kv_len / 128));
  double blocks = n_q * (back + 1);
  if (n_q == n_kv) {  // sum over query blocks i of min(i, back) + 1
    double ramp = std::min(back, n - 1);
    blocks = n + ramp * (ramp + 1) / 2 + (n - 1 - ramp) * back;
  }
  return std::min(triangle, blocks / (n_q * n_kv));
}

double qkvo_bytes(const AttentionShape& a) {
  double kv_heads = a.kv_batch_heads > 0 ? a.kv_batch_heads : a.batch_heads;
  double q_or_o = a.batch_heads * a.q_len * a.head_dim * a.element_bytes;
  double k_or_v = kv_heads * a.kv_len * a.head_dim * a.element_bytes;
  return q_or_o + 2 * k_or_v;  // Q, K, V (or dQ, dK, dV)
}

}  // namespace

AttentionEstimate ComputeModel::fused_attention(const AttentionShape& a, double flops, double bytes,
                                                double eff) const {
  if (!profile_->attention.available)
    throw std::invalid_argument("the device profile has no attention section (fused attention kernel)");
  double peak = rates_.attention_peak_flops > 0 ? rates_.attention_peak_flops : rates_.peak_flops;
  AttentionEstimate e;
  e.flops = flops;
  e.bytes = bytes;
  if (flops <= 0) return e;
  double compute = flops / (peak * profile_->clock_sustain_factor * eff);
  e.seconds = std::max(compute, bytes / achieved_memory_bandwidth()) + profile_->kernel_overhead_s;
  return e;
}

double ComputeModel::attention_shape_scale(const AttentionShape& a, bool forward) const {
  const auto& at = profile_->attention;
  double scale = at.head_dim_scale(forward, a.head_dim);
  if (a.causal) scale *= at.causal_efficiency;
  double overhead = forward ? at.forward_block_overhead : at.backward_block_overhead;
  if (overhead > 0) {
    // Blocks of 128 the loop walks; under the causal mask a block walks its share of them.
    double walk = std::max(1.0, std::ceil((forward ? a.kv_len : a.q_len) / 128) * causal_fraction(a));
    scale *= walk / (walk + overhead);
  }
  return scale;
}

AttentionEstimate ComputeModel::fused_attention_forward(const AttentionShape& a) const {
  double flops = 4 * a.batch_heads * a.q_len * a.kv_len * a.head_dim * causal_fraction(a);
  double o_bytes = a.batch_heads * a.q_len * a.head_dim * a.element_bytes;
  double lse_bytes = a.batch_heads * a.q_len * 4;  // fp32 logsumexp per query row
  return fused_attention(a, flops, qkvo_bytes(a) + o_bytes + lse_bytes,
                         profile_->attention.forward_efficiency * attention_shape_scale(a, true));
}

AttentionEstimate ComputeModel::fused_attention_backward(const AttentionShape& a) const {
  double flops = 2.5 * 4 * a.batch_heads * a.q_len * a.kv_len * a.head_dim * causal_fraction(a);
  double o_bytes = a.batch_heads * a.q_len * a.head_dim * a.element_bytes;
  double lse_bytes = a.batch_heads * a.q_len * 4;
  // reads Q, K, V, O, dO, logsumexp (+ the fp32 row sums D = rowsum(dO * O)); writes dQ, dK, dV
  double bytes = qkvo_bytes(a) + 2 * o_bytes + 2 * lse_bytes + qkvo_bytes(a);
  return fused_attention(a, flops, bytes,
                         profile_->attention.backward_efficiency * attention_shape_scale(a, false));
}

double fit_mainloop_efficiency(const DeviceProfile& profile, const DeviceRates& rates, const GemmShape& shape,
                               double measured_flops_per_s) {
  double flops = 2.0 * shape.m * shape.n * shape.k * shape.batch;
  double target = flops / measured_flops_per_s;
  double lo = 0.05, hi = 1.0;
  auto time_at = [&](double eff) {
    DeviceProfile p = profile;
    p.gemm.mainloop_efficiency = eff;
    return ComputeModel(p, rates).gemm(shape).seconds;
  };
  if (time_at(hi) > target)
    throw std::invalid_argument(
        "measured throughput is above what the model allows at 100% main-loop efficiency");
  for (int i = 0; i < 60; ++i) {
    double mid = 0.5 * (lo + hi);
    (time_at(mid) > target ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace podsim::calibration
