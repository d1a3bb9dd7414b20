#include "podsim/fit/least_squares.hpp"

#include <Eigen/QR>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

namespace podsim::calibration {
namespace {

// Unconstrained least squares over the columns in `free`, by Eigen's column-pivoted Householder QR of
// those columns (no normal equations, so the condition number is not squared). Returns nothing when the
// columns are linearly dependent (QR rank below their count, at Eigen's default threshold).
std::optional<std::vector<double>> solve_subset(const std::vector<std::vector<double>>& a,
                                                const std::vector<double>& b, const std::vector<int>& free) {
  const Eigen::Index rows = static_cast<Eigen::Index>(a.size()), k = static_cast<Eigen::Index>(free.size());
  Eigen::MatrixXd m(rows, k);
  Eigen::VectorXd rhs(rows);
  for (Eigen::Index r = 0; r < rows; ++r) {
    for (Eigen::Index i = 0; i < k; ++i) m(r, i) = a[r][free[i]];
    rhs(r) = b[r];
  }
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(m);
  if (qr.rank() < k) return std::nullopt;
  Eigen::VectorXd x = qr.solve(rhs);
  return std::vector<double>(x.data(), x.data() + k);
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
