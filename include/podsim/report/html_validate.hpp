// The report `podsim validate` writes next to validation.csv (validate.html): predicted against published
// per row on a scatter with the y = x line and +-5% / +-20% bands, and a table sorted by |error|. The same
// for the Megatron SC21 schema (TFLOP/s per GPU) and NVIDIA's (tokens/s per GPU).
#pragma once

#include <string>
#include <vector>

namespace podsim::report {

struct ValidationPoint {
  std::string label;  // "GPT 175B, 1024 GPUs, tp 8 pp 8" / "row 12: Llama3 70B on DGX-H100"
  double published = 0, predicted = 0, error_percent = 0;
  std::string status;  // ok rows are plotted; the others are listed with their detail
  std::string detail;
};

struct ValidationReport {
  std::string title, subtitle;
  std::string metric;  // "TFLOP/s per GPU"
  std::vector<ValidationPoint> rows;
};

std::string validation_report_html(const ValidationReport& report);

}  // namespace podsim::report
