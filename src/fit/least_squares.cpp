#include "podsim/fit/least_squares.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

namespace podsim::calibration {
namespace {

// Unconstrained least squares over the columns in `free` (normal equations, Gaussian elimination with
// partial pivoting). Returns nothing when those columns are linearly dependent.
std::optional<std::vector<double>> solve_subset(const std::vector<std::vector<double>>& a,
                                                const std::vector<double>& b, const std::vector<int>& free) {
  const size_t k = free.size();
  std::vector<std::vector<double>> m(k, std::vector<double>(k + 1, 0));
  double scale = 0;
  for (size_t r = 0; r < a.size(); ++r)
    for (size_t i = 0; i < k; ++i) {
      for (size_t j = 0; j < k; ++j) m[i][j] += a[r][free[i]] * a[r][free[j]];
      m[i][k] += a[r][free[i]] * b[r];
    }
  for (size_t i = 0; i < k; ++i) scale = std::max(scale, std::fabs(m[i][i]));
  for (size_t col = 0; col < k; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < k; ++r)
      if (std::fabs(m[r][col]) > std::fabs(m[pivot][col])) pivot = r;
    if (std::fabs(m[pivot][col]) <= 1e-12 * std::max(scale, 1e-300)) return std::nullopt;
    std::swap(m[col], m[pivot]);
    for (size_t r = 0; r < k; ++r) {
      if (r == col) continue;
      double f = m[r][col] / m[col][col];
      for (size_t c = col; c <= k; ++c) m[r][c] -= f * m[col][c];
    }
  }
  std::vector<double> x(k);
  for (size_t i = 0; i < k; ++i) x[i] = m[i][k] / m[i][i];
  return x;
}

}  // namespace

LeastSquaresResult nonnegative_least_squares(const std::vector<std::vector<double>>& a,
                                             const std::vector<double>& b) {
  if (a.empty() || a.size() != b.size()) throw std::invalid_argument("least squares: A and b sizes differ");
  const size_t n = a[0].size();
  if (n == 0 || n > 8) throw std::invalid_argument("least squares: between 1 and 8 unknowns");
  for (const auto& row : a)
    if (row.size() != n) throw std::invalid_argument("least squares: ragged matrix");

  auto residual = [&](const std::vector<double>& x) {
    double sum = 0;
    for (size_t r = 0; r < a.size(); ++r) {
      double v = -b[r];
      for (size_t j = 0; j < n; ++j) v += a[r][j] * x[j];
      sum += v * v;
    }
    return sum;
  };

  LeastSquaresResult best;
  best.x.assign(n, 0);
  best.residual_sum_sq = residual(best.x);  // the empty set of free unknowns: x = 0
  std::vector<int> all(n);
  for (size_t j = 0; j < n; ++j) all[j] = static_cast<int>(j);
  best.identifiable = solve_subset(a, b, all).has_value();
  // The optimum of a convex problem over the orthant is the unconstrained optimum on one of its faces;
  // every feasible face optimum is a candidate, and the best of them is the global optimum.
  for (unsigned mask = 1; mask < (1u << n); ++mask) {
    std::vector<int> free;
    for (size_t j = 0; j < n; ++j)
      if (mask & (1u << j)) free.push_back(static_cast<int>(j));
    auto sub = solve_subset(a, b, free);
    if (!sub) continue;
    std::vector<double> x(n, 0);
    bool feasible = true;
    for (size_t i = 0; i < free.size(); ++i) {
      if ((*sub)[i] < 0) feasible = false;
      x[free[i]] = (*sub)[i];
    }
    if (!feasible) continue;
    double r = residual(x);
    if (r < best.residual_sum_sq * (1 - 1e-12)) {
      best.x = x;
      best.residual_sum_sq = r;
    }
  }
  return best;
}

}  // namespace podsim::calibration
