#include "podsim/core/text_input.hpp"

#include <cmath>
#include <sstream>

namespace podsim {

std::vector<TextLine> numbered_lines(const std::string& text) {
  std::vector<TextLine> lines;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back({lineno, line});
  }
  return lines;
}

std::optional<double> parse_finite_number(const std::string& text) {
  size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(text, &pos);
  } catch (const std::exception&) {
    pos = 0;
  }
  if (pos == 0 || pos != text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace podsim
