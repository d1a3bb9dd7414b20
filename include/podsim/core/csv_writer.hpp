// Writing CSV that any RFC 4180 reader (podsim's own read_csv, Python's csv, spreadsheets) reads back to
// the same cells. Every CSV podsim writes (summary.csv, breakdown.csv, a sweep's results.csv,
// validation.csv) goes through these two functions, so that a name with a comma, a quote or a line break
// (lane "server 0 (GPU 0, its host and SSD)", a workload named in YAML) never shifts the columns.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace podsim {

// `cell` as one CSV field: as is when it holds no comma, double quote, CR or LF; otherwise in double
// quotes with each inner double quote doubled.
std::string csv_field(std::string_view cell);

// The cells as one CSV record, separated by commas and ended by "\n".
std::string csv_record(const std::vector<std::string>& cells);

}  // namespace podsim
