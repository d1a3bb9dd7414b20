// The text `podsim calibrate fit` prints (the column layout is part of what users and tests read).
#include <fmt/format.h>

#include "podsim/fit/device_calibration.hpp"
#include "podsim/fit/error_text.hpp"

namespace podsim::fit {
namespace {

std::string parameters_text(const DeviceCalibration& c) {
  const auto& p = c.fit.profile;
  std::string out = "fitted parameters:\n";
  out += fmt::format("  {:<42} {:8.3f}\n", "gemm.mainloop_efficiency", p.gemm.mainloop_efficiency);
  out += fmt::format("  {:<42} {:8.1f}\n", "gemm.required_tile_intensity_flop_per_byte",
                     p.gemm.required_tile_intensity);
  out += fmt::format("  {:<42} {:8.2f}\n", "gemm.wave_overhead_us", p.gemm.wave_overhead_s * 1e6);
  out += fmt::format("  {:<42} {:8.2f}\n", "kernel_overhead_us", p.kernel_overhead_s * 1e6);
  out += fmt::format("  {:<42} {:8.3f}\n", "memory.bandwidth_efficiency", p.memory_efficiency);
  out += fmt::format(
      "  {:<42} {:8.3f}  ({})\n", "clock_sustain_factor", p.clock_sustain_factor,
      c.fit.measured_clock_sustain ? "measured: burst / sustained" : "kept from the base profile");
  return out;
}

std::string error_table_text(const calibration::DeviceFitResult& result) {
  std::string out = "model error per class (model time vs measured; bias > 0: model slower)\n";
  out += fmt::format("  {:<40} {:>5} {:>10} {:>9} {:>6} | {:<27}\n", "", "", "all rows", "", "",
                     "held out (fit without them)");
  out += fmt::format("  {:<40} {:>5} {:>10} {:>9} {:>6} | {:>5} {:>10} {:>9}\n", "class", "rows",
                     "mean|err|%", "max|err|%", "bias%", "rows", "mean|err|%", "max|err|%");
  for (const auto& [key, e] : result.in_sample)
    out += fmt::format("  {:<40} {} | {}\n", key, error_cell(result.in_sample, key, true),
                       error_cell(result.holdout, key, false));
  calibration::ErrorSummary in_total = fitted_total(result.in_sample),
                            out_total = fitted_total(result.holdout);
  out += fmt::format("  {:<40} {:5} {:>10} {:>9} {:>6} | {:5} {:>10} {:>9}\n", "all fitted classes",
                     in_total.count, pct(in_total.mean_abs), pct(in_total.max_abs), "", out_total.count,
                     pct(out_total.mean_abs), pct(out_total.max_abs));
  return out;
}

}  // namespace

std::string device_fit_report(const DeviceCalibration& c) {
  std::string out = fmt::format("podsim calibrate fit: {}\n", c.machine);
  out += fmt::format("  {} GEMM rows from {}, {} memory rows from {}\n", c.gemm_rows, c.request.gemm_csv,
                     c.memory_rows, c.request.memory_csv);
  out += parameters_text(c);
  out += "memory kernels at their largest size (achieved / datasheet HBM bandwidth):\n";
  for (const auto& [k, e] : c.fit.memory_kernel_efficiency)
    out += fmt::format("  {:<20} {:6.1f}%\n", k, 100 * e);
  out += error_table_text(c.fit);
  for (const auto& n : c.fit.notes) out += fmt::format("note: {}\n", n);
  return out;
}

}  // namespace podsim::fit
