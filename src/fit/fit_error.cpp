#include "podsim/fit/fit_error.hpp"

#include <algorithm>
#include <cmath>

namespace podsim::calibration {

void ErrorSummary::add(double e) {
  ++count;
  mean_abs += (std::fabs(e) - mean_abs) / count;
  bias += (e - bias) / count;
  max_abs = std::max(max_abs, std::fabs(e));
}

double relative_error(double model, double measured) {
  return measured > 0 ? (model - measured) / measured : 0;
}

}  // namespace podsim::calibration
