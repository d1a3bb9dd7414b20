#include "podsim/core/text_input.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "podsim/core/error.hpp"

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

std::string read_text_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (status.type() == fs::file_type::not_found)
    throw InputError(fmt::format("{}: cannot open file: no such file", printable(path)));
  if (status.type() == fs::file_type::directory)
    throw InputError(fmt::format("{}: is a directory, expected a file", printable(path)));
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(fmt::format("{}: cannot open file: {}", printable(path),
                                 errno ? std::strerror(errno) : "unreadable"));
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(fmt::format("{}: cannot read file", printable(path)));
  return text.str();
}

bool is_valid_utf8(std::string_view text) {
  return !invalid_utf8_at(text).has_value();
}

std::optional<size_t> invalid_utf8_at(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
    unsigned char c = byte(i);
    size_t extra = 0;
    unsigned int code = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1, code = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2, code = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3, code = c & 0x07;
    } else {
      return i;  // a continuation byte where a character should start, or 0xF8..0xFF
    }
    if (i + extra >= text.size()) return i;  // truncated
    for (size_t k = 1; k <= extra; ++k) {
      if ((byte(i + k) & 0xC0) != 0x80) return i;
      code = (code << 6) | (byte(i + k) & 0x3F);
    }
    static constexpr unsigned int kSmallest[] = {0, 0x80, 0x800, 0x10000};
    if (code < kSmallest[extra] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return i;
    i += extra + 1;
  }
  return std::nullopt;
}

std::string printable(std::string_view text) {
  bool utf8 = is_valid_utf8(text);  // then only control characters need escaping
  std::string out;
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    if ((c >= 0x20 && c < 0x7F) || (utf8 && c >= 0x80))
      out += ch;
    else
      out += fmt::format("\\x{:02X}", c);
  }
  return out;
}

std::string trimmed(std::string_view text) {
  size_t begin = text.find_first_not_of(" \t"), end = text.find_last_not_of(" \t");
  return begin == std::string_view::npos ? std::string() : std::string(text.substr(begin, end - begin + 1));
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
