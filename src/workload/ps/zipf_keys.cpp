#include "podsim/workload/ps/zipf_keys.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace podsim::workload {
namespace {

// Composite Simpson over t = log x of g(x) * x (dx = x dt), for the smooth tail of a rank sum.
template <typename F>
double log_integral(double a, double b, F&& g) {
  if (b <= a) return 0;
  const double ta = std::log(a), tb = std::log(b);
  // ~400 intervals per unit of log x keeps Simpson's error far below the midpoint rule's.
  int n = std::max(64, static_cast<int>(std::ceil((tb - ta) * 400)));
  if (n % 2) ++n;
  const double h = (tb - ta) / n;
  double sum = 0;
  for (int j = 0; j <= n; ++j) {
    double t = ta + j * h, x = std::exp(t);
    double w = (j == 0 || j == n) ? 1 : (j % 2 ? 4 : 2);
    sum += w * g(x) * x;
  }
  return sum * h / 3;
}

}  // namespace

ZipfKeys::ZipfKeys(double keys, double exponent) : keys_(std::floor(keys)), exponent_(exponent) {
  if (!(keys_ >= 1)) throw std::invalid_argument("a Zipf law needs at least one key");
  if (!(exponent_ >= 0) || !std::isfinite(exponent_))
    throw std::invalid_argument("a Zipf exponent must be 0 (uniform) or more");
  norm_ = harmonic(1, keys_);
}

double ZipfKeys::harmonic(double a, double b) const {
  a = std::max(1.0, std::ceil(a));
  b = std::min(keys_, std::floor(b));
  if (b < a) return 0;
  double sum = 0;
  double exact_end = std::min(b, kExactRanks);
  for (double i = a; i <= exact_end; ++i) sum += std::pow(i, -exponent_);
  double lo = std::max(a, kExactRanks + 1);
  if (b >= lo) {  // integral of x^-s over [lo - 1/2, b + 1/2], in closed form
    double x0 = lo - 0.5, x1 = b + 0.5;
    sum += std::abs(exponent_ - 1) < 1e-12
               ? std::log(x1 / x0)
               : (std::pow(x1, 1 - exponent_) - std::pow(x0, 1 - exponent_)) / (1 - exponent_);
  }
  return sum;
}

double ZipfKeys::probability(double rank) const {
  return std::pow(rank, -exponent_) / norm_;
}

double ZipfKeys::head_mass(double c) const {
  if (c <= 0) return 0;
  if (c >= keys_) return 1;
  return harmonic(1, c) / norm_;
}

double ZipfKeys::expected_unique(double draws, double first, double last) const {
  first = std::max(1.0, std::ceil(first));
  last = std::min(keys_, std::floor(last));
  if (draws <= 0 || last < first) return 0;
  // P(key seen) = 1 - (1 - p)^M, computed without cancellation for tiny p.
  auto seen = [&](double x) { return -std::expm1(draws * std::log1p(-probability(x))); };
  double sum = 0;
  double exact_end = std::min(last, kExactRanks);
  for (double i = first; i <= exact_end; ++i) sum += seen(i);
  double lo = std::max(first, kExactRanks + 1);
  if (last >= lo) sum += log_integral(lo - 0.5, last + 0.5, seen);
  return sum;
}

}  // namespace podsim::workload
