// Files a run leaves behind. Every file is written to a temporary name and renamed into place, so an
// interrupted run never leaves a file that looks complete.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "podsim/report/run_result.hpp"

namespace podsim::report {

using Row = std::vector<std::pair<std::string, std::string>>;  // ordered (column, value)

// One row of summary.csv; column names carry units. The first columns are the CLI contract: devices,
// step_time_s, tflops_per_device, mfu, memory_per_device_GiB, tokens_per_s.
Row summary_row(const RunResult& r);

std::string csv(const std::vector<Row>& rows);
std::string breakdown_csv(const RunResult& r);
std::string result_json(const RunResult& r);

// summary.csv, breakdown.csv and result.json in `dir` (created if needed).
void write_run_outputs(const RunResult& r, const std::string& dir);

void atomic_write(const std::string& path, const std::string& content);

}  // namespace podsim::report
