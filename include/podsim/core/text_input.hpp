// Strict reading of the text files podsim imports (YAML, CSV tables, nccl-tests logs): the whole file with
// a clear error when it cannot be read, line by line with line numbers for error messages, and numbers
// that must be the whole field.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace podsim {

struct TextLine {
  int number = 0;    // 1-based, as editors and error messages count
  std::string text;  // without the line end
};

// The lines of `text`; a "\r\n" line end reads as "\n", so files written on Windows read the same.
std::vector<TextLine> numbered_lines(const std::string& text);

// The contents of the file at `path`. Throws InputError naming the path and what is wrong when it does not
// exist, is a directory or cannot be read (permissions, I/O error).
std::string read_text_file(const std::string& path);

// Whether `text` is well-formed UTF-8 (no stray continuation bytes, overlong forms, surrogates or code
// points above U+10FFFF), and where the first byte that breaks it is.
bool is_valid_utf8(std::string_view text);
std::optional<size_t> invalid_utf8_at(std::string_view text);

// `text` with control characters, and every non-ASCII byte when `text` is not valid UTF-8, written as
// \xNN: for naming a path or value in an error message whatever bytes it holds.
std::string printable(std::string_view text);

// `text` without the spaces and tabs it begins or ends with.
std::string trimmed(std::string_view text);

// `text` as a number when all of it is one and it is finite; nothing otherwise ("12abc", "", "inf").
std::optional<double> parse_finite_number(const std::string& text);

}  // namespace podsim
