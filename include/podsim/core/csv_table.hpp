// Reading the small CSV tables podsim ships and imports (validation references, calibration data).
// Lines starting with '#' are comments (provenance headers); the first other line is the header.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace podsim {

struct CsvTable {
  std::string file;
  std::vector<std::string> comments;  // the '#' lines, without the '#'
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  std::vector<int> row_lines;  // 1-based line number of each row, for error messages

  // Throws InputError naming file and line when the row lacks the column or it is not a number.
  double number(size_t row, const std::string& column) const;
  std::string text(size_t row, const std::string& column) const;
  bool has_column(const std::string& column) const;
  int column_index(const std::string& column) const;  // -1 when absent
};

// Throws InputError (file:line) for unreadable files, ragged rows and unterminated quotes.
CsvTable read_csv(const std::string& path);
CsvTable parse_csv(const std::string& text, const std::string& name);

}  // namespace podsim
