// Self-contained HTML reports (Chart.js embedded, no network needed to view them).
#pragma once

#include <string>
#include <vector>

#include "podsim/report/run_result.hpp"

namespace podsim::report {

struct ReportTable {
  std::vector<std::string> columns;  // results.csv columns (summary_columns() and any extras)
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> axis_keys;  // columns that label a point ("topology.nodes", ...)
};

// A study: throughput and scaling efficiency against devices per system, the stacked step-time breakdown
// and memory against capacity per point, and a sortable table of every point.
std::string sweep_report_html(const std::string& title, const std::string& subtitle,
                              const ReportTable& table);

// A single run: the same charts for its one point plus the per-stage breakdown and memory.
std::string run_report_html(const RunResult& r);

}  // namespace podsim::report
