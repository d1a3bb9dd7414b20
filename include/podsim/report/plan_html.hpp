// The HTML report of `podsim plan`: throughput against memory per device of every simulated candidate,
// the Pareto front (no other candidate is faster with less memory) marked, the winner explained against
// the runner-up, and the ranked table. One self-contained file (Chart.js embedded, as html.hpp's).
#pragma once

#include <string>
#include <vector>

namespace podsim::report {

struct PlanReport {
  std::string title;
  std::vector<std::string> columns;  // plan.csv's
  std::vector<std::vector<std::string>> rows;
  std::string explanation;  // the winner against the runner-up
};

// Indices of the rows (with tokens_per_s and memory_GiB) on the Pareto front, by memory ascending.
std::vector<size_t> pareto_front(const PlanReport& report);

std::string plan_report_html(const PlanReport& report);

}  // namespace podsim::report
