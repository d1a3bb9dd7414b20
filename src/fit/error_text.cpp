#include "podsim/fit/error_text.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace podsim::fit {
namespace {

bool is_fitted(const std::string& key) {
  return key.find("not fitted") == std::string::npos;
}

}  // namespace

std::string pct(double v) {
  return fmt::format("{:.1f}", 100 * v);
}

std::string error_cell(const calibration::ErrorTable& table, const std::string& key, bool with_bias) {
  auto it = table.find(key);
  if (it == table.end())
    return fmt::format("{:>5} {:>10} {:>9}{}", "-", "-", "-", with_bias ? fmt::format(" {:>6}", "-") : "");
  const auto& e = it->second;
  return fmt::format("{:>5} {:>10} {:>9}{}", e.count, pct(e.mean_abs), pct(e.max_abs),
                     with_bias ? fmt::format(" {:>+6.1f}", 100 * e.bias) : "");
}

std::string error_summary_text(const calibration::ErrorTable& table, bool fitted_only) {
  std::string out;
  for (const auto& [key, e] : table) {
    if (fitted_only && !is_fitted(key)) continue;
    out += fmt::format("{}{} {}%", out.empty() ? "" : ", ", key, pct(e.mean_abs));
  }
  return out;
}

calibration::ErrorSummary fitted_total(const calibration::ErrorTable& table) {
  calibration::ErrorSummary t;
  for (const auto& [key, e] : table) {
    if (!is_fitted(key)) continue;
    t.mean_abs = (t.mean_abs * t.count + e.mean_abs * e.count) / std::max(1, t.count + e.count);
    t.count += e.count;
    t.max_abs = std::max(t.max_abs, e.max_abs);
  }
  return t;
}

}  // namespace podsim::fit
