// Files a run leaves behind. Every file is written to a temporary name and renamed into place, so an
// interrupted run never leaves a file that looks complete (output_files.hpp).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "podsim/report/output_files.hpp"
#include "podsim/report/run_result.hpp"

namespace podsim::report {

using Row = std::vector<std::pair<std::string, std::string>>;  // ordered (column, value)

// Every column summary.csv (and a sweep's results.csv) can have, in order: the CLI contract first
// (devices, step_time_s, tflops_per_device, mfu, memory_per_device_GiB, tokens_per_s), then status and
// names, the time breakdown, and the settings of every workload kind. The set is fixed so that rows of
// different workloads line up in one table; a row leaves the settings its kind does not have empty.
// Columns are only ever added at the end (out_of_memory_tier, memory_needed_GiB, memory_available_GiB:
// what did not fit in an out_of_memory run, per unit of that tier), so existing readers keep working.
const std::vector<std::string>& summary_columns();

// One row of summary.csv with all summary_columns(). Throws std::logic_error when a plan reports a
// setting that is not a known column (add it to the list in writers.cpp).
Row summary_row(const RunResult& r);

// RFC 4180 CSV (core/csv_writer.hpp): the header of the first row's columns, then each row's values.
std::string csv(const std::vector<Row>& rows);
std::string csv_line(const Row& row, bool header);
// Per lane: seconds per category, idle and total, and memory. A run that did not simulate (out_of_memory)
// has the same columns and lanes with the time columns empty: what each lane would need is still known.
std::string breakdown_csv(const RunResult& r);
std::string result_json(const RunResult& r);

// summary.csv, breakdown.csv and result.json in `dir` (created if needed), whatever the run's status, so
// that no file of an earlier run in `dir` is left looking like this run's. Returns the names written.
std::vector<std::string> write_run_outputs(const RunResult& r, const std::string& dir);

}  // namespace podsim::report
