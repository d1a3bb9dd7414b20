#include "podsim/core/csv_table.hpp"

#include <fmt/format.h>

#include "podsim/core/error.hpp"
#include "podsim/core/text_input.hpp"

namespace podsim {
namespace {

// One record of RFC 4180 CSV starting at `pos`; a quoted field may hold commas, doubled quotes and line
// breaks, so a record can span lines. Advances `pos` past the record's line end and `line` by the lines
// the record took.
std::vector<std::string> read_record(const std::string& text, size_t& pos, int& line,
                                     const std::string& name) {
  std::vector<std::string> out;
  std::string cell;
  bool quoted = false;
  int opened_at = line;
  for (; pos < text.size(); ++pos) {
    char c = text[pos];
    if (quoted) {
      if (c == '"' && pos + 1 < text.size() && text[pos + 1] == '"') {
        cell += '"', ++pos;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        cell += c;
      }
    } else if (c == '"') {
      quoted = true;
      opened_at = line;
    } else if (c == ',') {
      out.push_back(std::move(cell));
      cell.clear();
    } else if (c == '\n') {
      ++pos, ++line;
      out.push_back(std::move(cell));
      return out;
    } else if (c != '\r') {
      cell += c;
    }
  }
  if (quoted) throw InputError(fmt::format("{}:{}: unterminated quote", name, opened_at));
  ++line;
  out.push_back(std::move(cell));
  return out;
}

// Skips a line that is empty or a '#' comment at `pos` (the start of a line); returns false otherwise.
bool skip_blank_or_comment(const std::string& text, size_t& pos, int& line, CsvTable& t) {
  size_t end = text.find('\n', pos);
  if (end == std::string::npos) end = text.size();
  std::string_view content(text.data() + pos, end - pos);
  if (!content.empty() && content.back() == '\r') content.remove_suffix(1);
  if (!content.empty() && content[0] != '#') return false;
  if (!content.empty()) t.comments.emplace_back(content.substr(1));
  pos = end + 1, ++line;
  return true;
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
  size_t pos = 0;
  int line = 1;
  while (pos < text.size()) {
    if (skip_blank_or_comment(text, pos, line, t)) continue;
    int lineno = line;
    auto cells = read_record(text, pos, line, name);
    if (t.columns.empty()) {
      t.columns = std::move(cells);
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
  return parse_csv(read_text_file(path), path);
}

}  // namespace podsim
