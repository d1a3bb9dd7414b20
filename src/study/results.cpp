#include "podsim/study/results.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "podsim/core/csv_table.hpp"
#include "podsim/core/csv_writer.hpp"
#include "podsim/core/error.hpp"
#include "podsim/report/writers.hpp"

namespace podsim::study {
namespace {

std::string escape(const std::string& s) {
  return csv_field(s);
}

}  // namespace

std::vector<std::string> results_columns(const Study& study) {
  std::vector<std::string> c = {"point", "point_id"};
  c.insert(c.end(), study.axis_keys.begin(), study.axis_keys.end());
  c.push_back("detail");
  const auto& summary = report::summary_columns();
  c.insert(c.end(), summary.begin(), summary.end());
  if (!study.goodput_file.empty()) c.insert(c.end(), goodput_columns().begin(), goodput_columns().end());
  c.insert(c.end(), memory_columns().begin(), memory_columns().end());
  return c;
}

const std::vector<std::string>& memory_columns() {
  static const std::vector<std::string> columns = {"memory_weights_GiB",   "memory_gradients_GiB",
                                                   "memory_optimizer_GiB", "memory_activations_GiB",
                                                   "memory_buffers_GiB",   "memory_framework_GiB"};
  return columns;
}

const std::vector<std::string>& goodput_columns() {
  static const std::vector<std::string> columns = {"goodput", "job_failures_per_day",
                                                   "checkpoint_interval_min", "ideal_train_days",
                                                   "expected_train_days"};
  return columns;
}

ResultRow unrun_row(const Study& study, const Point& p, const std::string& status,
                    const std::string& detail) {
  auto columns = results_columns(study);
  ResultRow row;
  row.point = p.index;
  row.id = p.id;
  for (const auto& col : columns) {
    std::string v;
    if (col == "point")
      v = std::to_string(p.index);
    else if (col == "point_id")
      v = p.id;
    else if (col == "detail")
      v = detail;
    else if (col == "status")
      v = status;
    else if (p.values.count(col))
      v = p.values.at(col);
    row.cells.push_back(v);
  }
  return row;
}

std::string header_line(const std::vector<std::string>& columns) {
  std::string out;
  for (size_t i = 0; i < columns.size(); ++i) out += (i ? "," : "") + escape(columns[i]);
  return out + "\n";
}

std::string row_line(const ResultRow& row) {
  std::string out;
  for (size_t i = 0; i < row.cells.size(); ++i) {
    std::string cell = row.cells[i];
    std::replace(cell.begin(), cell.end(), '\n', ' ');
    out += (i ? "," : "") + escape(cell);
  }
  return out + "\n";
}

ResultsTable read_results(const std::string& path, const std::vector<std::string>& expected_columns) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open file", path));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  // An interrupted append can leave a last line without its newline: drop it, it will be redone.
  if (!text.empty() && text.back() != '\n')
    text.erase(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
  CsvTable csv = parse_csv(text, path);
  if (!expected_columns.empty() && csv.columns != expected_columns)
    throw InputError(
        fmt::format("{}: its columns do not match this study's (was it written by another study file or "
                    "podsim version?); move it away or use another --out directory",
                    path));
  ResultsTable t;
  t.columns = csv.columns;
  int point_col = csv.column_index("point"), id_col = csv.column_index("point_id");
  if (point_col < 0 || id_col < 0)
    throw InputError(fmt::format("{}: not a podsim results file (no point column)", path));
  for (size_t i = 0; i < csv.rows.size(); ++i) {
    ResultRow r;
    r.point = static_cast<int>(csv.number(i, "point"));
    r.id = csv.rows[i][id_col];
    r.cells = csv.rows[i];
    t.rows.push_back(std::move(r));
  }
  return t;
}

void write_results(const std::string& path, const ResultsTable& table) {
  std::vector<const ResultRow*> rows;
  for (const auto& r : table.rows) rows.push_back(&r);
  std::stable_sort(rows.begin(), rows.end(),
                   [](const ResultRow* a, const ResultRow* b) { return a->point < b->point; });
  std::string out = header_line(table.columns);
  for (const auto* r : rows) out += row_line(*r);
  report::atomic_write(path, out);
}

}  // namespace podsim::study
