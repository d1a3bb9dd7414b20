#include "podsim/core/csv_table.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "podsim/core/error.hpp"
#include "podsim/core/text_input.hpp"

namespace podsim {
namespace {

std::vector<std::string> split_line(const std::string& line, const std::string& name, int lineno) {
  std::vector<std::string> out;
  std::string cell;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"')
        cell += '"', ++i;
      else if (c == '"')
        quoted = false;
      else
        cell += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(cell);
      cell.clear();
    } else if (c != '\r') {
      cell += c;
    }
  }
  if (quoted) throw InputError(fmt::format("{}:{}: unterminated quote", name, lineno));
  out.push_back(cell);
  return out;
}

}  // namespace

int CsvTable::column_index(const std::string& column) const {
  for (size_t i = 0; i < columns.size(); ++i)
    if (columns[i] == column) return static_cast<int>(i);
  return -1;
}

bool CsvTable::has_column(const std::string& column) const {
  return column_index(column) >= 0;
}

std::string CsvTable::text(size_t row, const std::string& column) const {
  int idx = column_index(column);
  if (idx < 0) throw InputError(fmt::format("{}: missing column '{}'", file, column));
  return rows.at(row).at(idx);
}

double CsvTable::number(size_t row, const std::string& column) const {
  std::string value = text(row, column);
  std::optional<double> v = parse_finite_number(value);
  if (!v)
    throw InputError(
        fmt::format("{}:{}: column '{}' must be a number, got '{}'", file, row_lines.at(row), column, value));
  return *v;
}

CsvTable parse_csv(const std::string& text, const std::string& name) {
  CsvTable t;
  t.file = name;
  for (const auto& [lineno, line] : numbered_lines(text)) {
    if (line.empty()) continue;
    if (line[0] == '#') {
      t.comments.push_back(line.substr(1));
      continue;
    }
    auto cells = split_line(line, name, lineno);
    if (t.columns.empty()) {
      t.columns = cells;
      continue;
    }
    if (cells.size() != t.columns.size())
      throw InputError(
          fmt::format("{}:{}: {} values but the header has {} columns (truncated or extra commas?)", name,
                      lineno, cells.size(), t.columns.size()));
    t.rows.push_back(std::move(cells));
    t.row_lines.push_back(lineno);
  }
  if (t.columns.empty()) throw InputError(fmt::format("{}: no header line", name));
  return t;
}

CsvTable read_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot open file", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_csv(ss.str(), path);
}

}  // namespace podsim
