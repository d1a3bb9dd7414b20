#include "podsim/report/goodput_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "podsim/core/csv_writer.hpp"

namespace podsim::report {

namespace {

std::string duration(double seconds) {
  if (!std::isfinite(seconds)) return "never";
  if (seconds < 120) return fmt::format("{:.1f} s", seconds);
  if (seconds < 7200) return fmt::format("{:.1f} min", seconds / 60);
  if (seconds < 3 * 86400) return fmt::format("{:.1f} h", seconds / 3600);
  return fmt::format("{:.1f} days", seconds / 86400);
}

std::string bytes_text(double b) {
  if (b >= 1e12) return fmt::format("{:.2f} TB", b / 1e12);
  return fmt::format("{:.1f} GB", b / 1e9);
}

std::string unit_name(reliability::FailureUnit u, double n) {
  const char* name = reliability::to_string(u);
  return fmt::format("{:.0f} {}{}", n, name, n == 1 ? "" : (u == reliability::FailureUnit::switch_ ? "es" : "s"));
}

std::string components_line(const reliability::GoodputAssessment& a) {
  auto sorted = a.components;
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& x, const auto& y) { return x.failures_per_hour > y.failures_per_hour; });
  std::string out;
  for (const auto& c : sorted)
    out += fmt::format("{}{} {:.3g}/day ({})", out.empty() ? "" : ", ", c.component.name,
                       c.failures_per_hour * 24, unit_name(c.component.per, c.units));
  return out;
}

}  // namespace

std::string goodput_summary(const reliability::GoodputAssessment& a) {
  std::string s;
  s += fmt::format("  goodput      {:.1f}% of wall time on useful steps (Monte Carlo over {} runs: {:.1f}% +- {:.1f}%)\n",
                   100 * a.estimate.fraction, a.monte_carlo.trials, 100 * a.monte_carlo.fraction,
                   100 * a.monte_carlo.standard_error);
  double mtbf = a.failures_per_hour > 0 ? 3600 / a.failures_per_hour : INFINITY;
  s += fmt::format("  failures     {:.2f} per day for this job (one every {}): {}\n", a.failures_per_hour * 24,
                   duration(mtbf), components_line(a));
  bool optimum = a.estimate.interval_steps == a.optimum.interval_steps;
  s += fmt::format(
      "  checkpoint   {} (weights + optimizer state) written in {}, training blocked {} each, every {} "
      "({} steps; {}; Young/Daly {})\n",
      bytes_text(a.checkpoint_bytes), duration(a.checkpoint_write_seconds),
      duration(a.checkpoint_blocking_seconds), duration(a.estimate.interval_seconds), a.estimate.interval_steps,
      optimum ? "the optimum" : fmt::format("the optimum is every {}", duration(a.optimum.interval_seconds)),
      duration(a.young_daly_interval_seconds));
  s += fmt::format("  restart      {} per failure ({} restore + {} to restart)\n", duration(a.restart_seconds),
                   duration(a.restore_seconds), duration(a.restart_seconds - a.restore_seconds));
  if (a.ideal_train_seconds > 0)
    s += fmt::format("  to train     {:.3g} tokens: {} without failures, {} expected\n", a.train_tokens,
                     duration(a.ideal_train_seconds), duration(a.expected_train_seconds));
  s += fmt::format("  assumptions  {} ({})\n", a.profile_file, a.profile_name);
  for (const auto& n : a.notes) s += fmt::format("  note         {}\n", n);
  return s;
}

std::string goodput_csv(const reliability::GoodputAssessment& a) {
  std::string s = csv_record({"profile", "failures_per_day", "job_mtbf_h", "checkpoint_GB", "checkpoint_write_s",
                              "checkpoint_blocking_s", "restart_s", "interval_steps", "interval_min",
                              "optimal_interval_min", "young_daly_interval_min", "goodput", "goodput_monte_carlo",
                              "goodput_monte_carlo_stderr", "train_tokens", "ideal_train_days",
                              "expected_train_days"});
  auto num = [](double v) { return std::isfinite(v) ? fmt::format("{:.6g}", v) : std::string(); };
  double mtbf = a.failures_per_hour > 0 ? 1 / a.failures_per_hour : INFINITY;
  s += csv_record({a.profile_file, num(a.failures_per_hour * 24), num(mtbf), num(a.checkpoint_bytes / 1e9),
                   num(a.checkpoint_write_seconds), num(a.checkpoint_blocking_seconds), num(a.restart_seconds),
                   fmt::format("{}", a.estimate.interval_steps), num(a.estimate.interval_seconds / 60),
                   num(a.optimum.interval_seconds / 60), num(a.young_daly_interval_seconds / 60),
                   num(a.estimate.fraction), num(a.monte_carlo.fraction), num(a.monte_carlo.standard_error),
                   num(a.train_tokens), num(a.ideal_train_seconds / 86400),
                   num(a.expected_train_seconds / 86400)});
  return s;
}

std::string goodput_components_csv(const reliability::GoodputAssessment& a) {
  std::string s = csv_record({"component", "per", "units", "mtbf_h_per_unit", "failures_per_day", "source"});
  for (const auto& c : a.components)
    s += csv_record({c.component.name, reliability::to_string(c.component.per), fmt::format("{:.6g}", c.units),
                     fmt::format("{:.6g}", c.component.mtbf_hours), fmt::format("{:.6g}", c.failures_per_hour * 24),
                     c.component.source});
  return s;
}

}  // namespace podsim::report
