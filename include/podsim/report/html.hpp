// Self-contained HTML reports: inline SVG charts, a little script for table sorting, no network needed.
#pragma once

#include <string>
#include <vector>

#include "podsim/report/run_result.hpp"

namespace podsim::report {

struct ReportTable {
  std::vector<std::string> columns;  // results.csv columns (summary_columns() and any extras)
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> axis_keys;  // columns that label a point ("topology.nodes", ...)
  // The point a what-if study compares against: its label (a case name, "tp=8 pp=16") or its point
  // number; empty = the first point (the study's `baseline:` key, when it has one).
  std::string baseline;
};

// A study (html_study*.cpp). What-if studies (no series varies the device count): throughput per case
// against the baseline with the best marked, and speedup / step-time change in the table. Studies over
// device counts: TFLOP/s per device and scaling efficiency against devices. Two swept keys: a heatmap.
// Always: the step-time breakdown and memory against capacity per point, the failures with their
// reasons, and a sortable table of every point.
std::string sweep_report_html(const std::string& title, const std::string& subtitle,
                              const ReportTable& table);

// A single run (html.cpp): a timeline of the step per pipeline stage, where each stage's time goes and
// its memory against capacity, and the summary table.
std::string run_report_html(const RunResult& r);

}  // namespace podsim::report
