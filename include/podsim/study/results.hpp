// A sweep's results table: one row per point, in point order once the sweep is complete.
//
// While a sweep runs, finished points are appended to `<name>.partial.csv` (one complete line per point,
// flushed), so an interrupted sweep loses nothing finished and `--resume` continues from it. When every
// point is done the rows are sorted by point and written atomically to `<name>.csv`, so a file named
// results.csv always holds a complete sweep, byte-identical whatever the number of workers.
#pragma once

#include <string>
#include <vector>

#include "podsim/study/study.hpp"

namespace podsim::study {

struct ResultRow {
  int point = 0;
  std::string id;
  std::vector<std::string> cells;  // aligned with the table's columns
};

struct ResultsTable {
  std::vector<std::string> columns;
  std::vector<ResultRow> rows;
};

// "point", "point_id", the study's axis keys, "detail", then report::summary_columns().
std::vector<std::string> results_columns(const Study& study);
// The columns a study with `goodput:` adds after the summary columns (goodput as a fraction of wall time).
// The peak lane's memory by component (weights, gradients, optimizer, activations, buffers, framework), in
// GiB: results.csv's last columns, so that a point's memory_per_device_GiB shows what it is made of.
const std::vector<std::string>& memory_columns();
const std::vector<std::string>& goodput_columns();

// The row of a point that did not run (filtered out, invalid input, crashed): status and detail only.
ResultRow unrun_row(const Study& study, const Point& p, const std::string& status, const std::string& detail);

std::string header_line(const std::vector<std::string>& columns);
std::string row_line(const ResultRow& row);

// Reads a results file. A truncated last line (an interrupted write) is ignored; a header that differs
// from `expected_columns` (when given) is an InputError naming the file.
ResultsTable read_results(const std::string& path, const std::vector<std::string>& expected_columns = {});

// Sorted by point, written to a temporary name and renamed.
void write_results(const std::string& path, const ResultsTable& table);

}  // namespace podsim::study
