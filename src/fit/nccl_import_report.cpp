// The text `podsim calibrate nccl-tests` prints (the column layout is part of what users and tests read).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "podsim/fit/error_text.hpp"
#include "podsim/fit/nccl_import.hpp"

namespace podsim::fit {
namespace {

std::string test_label(const calibration::CollectiveFit& c) {
  return fmt::format("{} {}x ({}:{})", c.log->op, c.log->ranks,
                     std::filesystem::path(c.log->file).filename().string(), c.log->first_line);
}

std::string size_text(double b) {
  return b >= 1 << 30   ? fmt::format("{:g} GiB", b / (1 << 30))
         : b >= 1 << 20 ? fmt::format("{:g} MiB", b / (1 << 20))
         : b >= 1 << 10 ? fmt::format("{:g} KiB", b / (1 << 10))
                        : fmt::format("{:g} B", b);
}

std::string per_test_text(const calibration::FabricFitResult& fit) {
  size_t width = 4;
  for (const auto& c : fit.collectives) width = std::max(width, test_label(c).size());
  std::string out =
      fmt::format("  {:<{}} {:>5}  {:<11} {:>11} {:>16} {:>10} {:>11} {:>10}\n", "test", width, "hosts",
                  "bound by", "ideal(GB/s)", "peak busbw(GB/s)", "efficiency", "latency(us)", "podsim err");
  for (const auto& c : fit.collectives) {
    std::string eff = c.efficiency > 0 ? fmt::format("{:.3f}", c.efficiency) : "-";
    std::string lat = c.latency > 0 ? fmt::format("{:.2f}", c.latency * 1e6) : "-";
    double peak = 0;
    for (const auto& r : c.ranges) peak = std::max(peak, r.summary.peak_busbw);
    out += fmt::format("  {:<{}} {:5}  {:<11} {:11.1f} {:16.1f} {:>10} {:>11} {:>9}%\n", test_label(c), width,
                       c.log->nodes, c.geometry.bandwidth_class, c.geometry.ideal_busbw / 1e9, peak / 1e9,
                       eff, lat, pct(c.model_error.mean_abs));
  }
  return out;
}

std::string per_range_text(const calibration::FabricFitResult& fit) {
  std::string out =
      "per size range (latency = fitted time at zero size, busbw = fitted bus bandwidth in the range):\n";
  out += fmt::format("  {:<18} {:<22} {:>11} {:>11} {:>16}  {:<11} {:>10}\n", "test", "sizes", "latency(us)",
                     "busbw(GB/s)", "peak busbw(GB/s)", "bound by", "podsim err");
  for (const auto& c : fit.collectives)
    for (const auto& r : c.ranges) {
      std::string test = fmt::format("{} {}x", c.log->op, c.log->ranks);
      std::string sizes = size_text(r.summary.from_bytes) + " - " + size_text(r.summary.to_bytes);
      out += fmt::format("  {:<18} {:<22} {:11.2f} {:11.1f} {:16.1f}  {:<11} {:>9}%\n", test, sizes,
                         r.summary.latency * 1e6, r.summary.busbw / 1e9, r.summary.peak_busbw / 1e9,
                         r.summary.bound_by, pct(r.model_error.mean_abs));
    }
  return out;
}

std::string profile_text(const calibration::FabricProfile& p) {
  std::string out = "profile:\n";
  for (const auto& [cls, e] : p.link_efficiency)
    out += fmt::format("  link_efficiency.{:<12} {:8.3f}\n", cls, e);
  for (const auto& [cls, s] : p.step_latency)
    out += fmt::format("  step_latency_us.{:<12} {:8.3f}\n", cls, s * 1e6);
  out += fmt::format("  {:<28} {:8.2f}\n", "launch_latency_us", p.launch_latency * 1e6);
  return out;
}

}  // namespace

std::string nccl_import_report(const NcclImport& r) {
  std::string out = fmt::format("podsim calibrate nccl-tests: {} test(s) from {} log(s), interpreted on {}\n",
                                r.tests.size(), r.request.logs.size(), r.topology_name);
  out += per_test_text(r.fit);
  out += per_range_text(r.fit);
  out += profile_text(r.fit.profile);
  for (const auto& n : r.fit.notes) out += fmt::format("note: {}\n", n);
  for (const auto& w : r.warnings) out += fmt::format("warning: {}\n", w);
  return out;
}

}  // namespace podsim::fit
