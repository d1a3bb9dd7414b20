// How well a fitted model reproduces measurements, summarized per class of measurement (a GEMM shape
// class, a memory kernel, a collective's size range). Errors are relative: (model - measured) / measured.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace podsim::calibration {

struct ErrorSummary {
  int count = 0;
  double mean_abs = 0;              // mean |relative error|
  double max_abs = 0;               // largest |relative error|
  double bias = 0;                  // mean signed relative error (> 0: the model is slow, < 0: optimistic)
  void add(double relative_error);  // running update
};

// Errors keyed by class name, in name order.
using ErrorTable = std::map<std::string, ErrorSummary>;

double relative_error(double model, double measured);

}  // namespace podsim::calibration
