// What `podsim sweep` and `podsim merge` write besides results.csv: sweep.json, report.html, the table on
// the terminal.
#pragma once

#include <string>
#include <vector>

#include "podsim/study/results.hpp"
#include "podsim/study/study.hpp"

namespace podsim::driver {

// DIR/sweep.json: the study's name, description, file, axis keys and number of points (for merge).
void write_sweep_json(const study::Study& study, const std::string& dir);

// DIR/report.html from a results table; returns its path.
std::string write_sweep_report(const std::string& dir, const study::ResultsTable& table,
                               const std::string& name, const std::string& description,
                               const std::vector<std::string>& axis_keys, const std::string& baseline = "");

// A compact view of the results for the terminal (the header and the first 41 rows), one line per row.
std::string results_table_text(const study::ResultsTable& table, const std::vector<std::string>& axis_keys);

}  // namespace podsim::driver
