// Strict reading of the text files podsim imports (CSV tables, nccl-tests logs): line by line with line
// numbers for error messages, and numbers that must be the whole field.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace podsim {

struct TextLine {
  int number = 0;    // 1-based, as editors and error messages count
  std::string text;  // without the line end
};

// The lines of `text`; a "\r\n" line end reads as "\n", so files written on Windows read the same.
std::vector<TextLine> numbered_lines(const std::string& text);

// `text` as a number when all of it is one and it is finite; nothing otherwise ("12abc", "", "inf").
std::optional<double> parse_finite_number(const std::string& text);

}  // namespace podsim
