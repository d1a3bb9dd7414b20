#include "podsim/calibration/compute_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace podsim::calibration {

double GemmEstimate::tflops() const {
  return seconds > 0 ? flops / seconds / 1e12 : 0;
}

ComputeModel::ComputeModel(DeviceProfile profile, DeviceRates rates)
    : profile_(std::move(profile)), rates_(rates) {
  if (rates_.sm_count <= 0 || rates_.peak_flops <= 0 || rates_.hbm_bandwidth <= 0)
    throw std::invalid_argument("ComputeModel needs positive peak, bandwidth and SM count");
  if (profile_.gemm.tiles.empty()) profile_.gemm.tiles = {{256, 128}, {128, 128}, {64, 64}};
  per_sm_flops_ = rates_.peak_flops * profile_.clock_sustain_factor / rates_.sm_count;
}

double ComputeModel::gemm_time(const GemmShape& s, const GemmTile& tile, int split, double* waves_out) const {
  const auto& g = profile_.gemm;
  double tiles = std::ceil(s.m / tile.m) * std::ceil(s.n / tile.n) * split * s.batch;
  double waves = std::ceil(tiles / rates_.sm_count);
  double k_per_tile = std::ceil(s.k / split);
  // Flop per byte of operands staged through shared memory (2*Mt*Nt*kk flop over (Mt+Nt)*kk elements).
  double intensity = 2.0 * tile.m * tile.n / ((tile.m + tile.n) * rates_.element_bytes);
  double feed = std::min(1.0, intensity / g.required_tile_intensity);
  double wave =
      2.0 * tile.m * tile.n * k_per_tile / (per_sm_flops_ * g.mainloop_efficiency * feed) + g.wave_overhead_s;
  double t = waves * wave;
  if (split > 1)  // partial sums in fp32, written and read back by a reduction kernel
    t += s.m * s.n * s.batch * split * 4.0 * 2 / achieved_memory_bandwidth() + profile_.kernel_overhead_s;
  if (waves_out) *waves_out = waves;
  return t;
}

GemmEstimate ComputeModel::gemm(const GemmShape& s) const {
  GemmEstimate best;
  best.flops = 2.0 * s.m * s.n * s.k * s.batch;
  if (best.flops <= 0) return best;
  best.seconds = std::numeric_limits<double>::infinity();
  for (const auto& tile : profile_.gemm.tiles) {
    double tiles_mn = std::ceil(s.m / tile.m) * std::ceil(s.n / tile.n) * s.batch;
    for (int split = 1; split <= profile_.gemm.max_split_k; split *= 2) {
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
  double traffic = (s.m * s.k + s.k * s.n + s.m * s.n) * s.batch * rates_.element_bytes;
  double memory_time = traffic / achieved_memory_bandwidth();
  if (memory_time > best.seconds) {
    best.seconds = memory_time;
    best.memory_bound = true;
  }
  best.seconds += profile_.kernel_overhead_s;
  return best;
}

double ComputeModel::memory_op(double bytes) const {
  if (bytes <= 0) return 0;
  return bytes / achieved_memory_bandwidth() + profile_.kernel_overhead_s;
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
