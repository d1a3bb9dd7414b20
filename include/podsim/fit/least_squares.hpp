// Small dense least squares for calibration fits with a handful of unknowns (a latency and a bandwidth,
// a launch latency and per-link-class step latencies). Physical parameters are never negative, so the
// solver is non-negative least squares, solved exactly by trying every set of free unknowns: with at most
// a few unknowns that is cheaper and simpler than an iterative method, and it reports when the data
// cannot tell the unknowns apart (rank deficiency) instead of returning an arbitrary split.
#pragma once

#include <vector>

namespace podsim::calibration {

struct LeastSquaresResult {
  std::vector<double> x;       // the solution, every entry >= 0
  double residual_sum_sq = 0;  // sum of squared residuals at x
  bool identifiable = true;    // false when the full system is rank deficient
};

// Minimizes ||A x - b||^2 subject to x >= 0. A is row-major, rows.size() == b.size(), every row has the
// same number of columns (at most 8). Throws std::invalid_argument on inconsistent sizes.
LeastSquaresResult nonnegative_least_squares(const std::vector<std::vector<double>>& a,
                                             const std::vector<double>& b);

}  // namespace podsim::calibration
