#include "podsim/core/csv_writer.hpp"

namespace podsim {
namespace {

std::string quoted(std::string_view cell) {
  std::string out = "\"";
  for (char c : cell) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string csv_field(std::string_view cell) {
  if (cell.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(cell);
  return quoted(cell);
}

std::string csv_record(const std::vector<std::string>& cells) {
  std::string out;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i) out += ',';
    // A record whose first cell starts with '#' would read back as a comment line (read_csv skips those),
    // and a record of one empty cell as a blank line (skipped too): both are quoted.
    bool looks_like_comment = i == 0 && !cells[i].empty() && cells[i][0] == '#';
    bool looks_blank = cells.size() == 1 && cells[i].empty();
    out += looks_like_comment || looks_blank ? quoted(cells[i]) : csv_field(cells[i]);
  }
  return out + "\n";
}

}  // namespace podsim
