// Files a run leaves behind. Every file is written to a temporary name and renamed into place, so an
// interrupted run never leaves a file that looks complete.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "podsim/report/run_result.hpp"

namespace podsim::report {

using Row = std::vector<std::pair<std::string, std::string>>;  // ordered (column, value)

// Every column summary.csv (and a sweep's results.csv) can have, in order: the CLI contract first
// (devices, step_time_s, tflops_per_device, mfu, memory_per_device_GiB, tokens_per_s), then status and
// names, the time breakdown, and the settings of every workload kind. The set is fixed so that rows of
// different workloads line up in one table; a row leaves the settings its kind does not have empty.
const std::vector<std::string>& summary_columns();

// One row of summary.csv with all summary_columns(). Throws std::logic_error when a plan reports a
// setting that is not a known column (add it to the list in writers.cpp).
Row summary_row(const RunResult& r);

std::string csv(const std::vector<Row>& rows);
std::string csv_line(const Row& row, bool header);
std::string breakdown_csv(const RunResult& r);
std::string result_json(const RunResult& r);

// summary.csv, breakdown.csv and result.json in `dir` (created if needed).
void write_run_outputs(const RunResult& r, const std::string& dir);

void atomic_write(const std::string& path, const std::string& content);

}  // namespace podsim::report
