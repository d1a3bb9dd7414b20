#include "podsim/workload/bounded_reads.hpp"

#include <fmt/format.h>

#include <climits>
#include <cmath>
#include <stdexcept>

#include "podsim/core/config_node.hpp"

namespace podsim::workload {
namespace {

int checked(const ConfigNode& node, std::string_view key, long long v, long long lo, long long hi,
            const char* also) {
  if (hi > INT_MAX) throw std::logic_error("int_in_or: upper bound above INT_MAX");
  if (v < lo || v > hi)
    node.fail(key,
              fmt::format("must be a whole number of at least {} and at most {}{}, got {}", lo, hi, also, v));
  return static_cast<int>(v);
}

}  // namespace

int int_in(const ConfigNode& node, std::string_view key, long long lo, long long hi) {
  return checked(node, key, node.integer(key), lo, hi, "");
}

int int_in_or(const ConfigNode& node, std::string_view key, long long lo, long long hi, long long fallback) {
  if (!node.has(key)) return checked(node, key, fallback, lo, hi, "");
  return checked(node, key, node.integer(key), lo, hi, "");
}

int int_in_or_auto(const ConfigNode& node, std::string_view key, long long lo, long long hi,
                   long long fallback) {
  long long v = node.positive_integer_or_auto(key, fallback);
  if (v == 0) return 0;
  return checked(node, key, v, lo, hi, " or auto");
}

double number_in_or(const ConfigNode& node, std::string_view key, double lo, double hi, double fallback,
                    const std::string& why) {
  double v = node.number_or(key, fallback);
  if (!std::isfinite(v) || v < lo || v > hi)
    node.fail(key,
              fmt::format("must be from {:g} to {:g}, got {:g}{}", lo, hi, v, why.empty() ? "" : "; " + why));
  return v;
}

}  // namespace podsim::workload
