#include "podsim/fit/kernel_measurements.hpp"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "podsim/core/csv_table.hpp"
#include "podsim/core/error.hpp"
#include "podsim/core/text_input.hpp"

namespace podsim::calibration {
namespace {

const std::vector<std::string> kGemmColumns = {"shape_class", "dtype",         "m", "n", "k",
                                               "batch",       "median_time_us"};
const std::vector<std::string> kMemoryColumns = {"kernel", "bytes", "median_time_us"};

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

void require_columns(const CsvTable& t, const std::vector<std::string>& required, const char* tool) {
  for (const auto& c : required)
    if (!t.has_column(c))
      throw InputError(fmt::format("{}: missing column '{}' (the header has: {}; {} writes: {})", t.file, c,
                                   join(t.columns), tool, join(required)));
  if (t.rows.empty()) throw InputError(fmt::format("{}: no measurements after the header", t.file));
}

double positive(const CsvTable& t, size_t row, const std::string& column) {
  double v = t.number(row, column);
  if (!(v > 0))
    throw InputError(
        fmt::format("{}:{}: column '{}' must be more than 0, got {}", t.file, t.row_lines[row], column, v));
  return v;
}

MeasurementHeader header_of(const CsvTable& t) {
  MeasurementHeader h;
  h.file = t.file;
  for (const auto& c : t.comments) {
    auto colon = c.find(':');
    if (colon == std::string::npos) continue;
    std::string key = trimmed(c.substr(0, colon));
    if (!key.empty() && key.find(' ') == std::string::npos) h.fields[key] = trimmed(c.substr(colon + 1));
  }
  return h;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot open file", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string MeasurementHeader::get(const std::string& key, const std::string& fallback) const {
  auto it = fields.find(key);
  return it == fields.end() ? fallback : it->second;
}

GemmMeasurements parse_gemm_measurements(const std::string& text, const std::string& name) {
  CsvTable t = parse_csv(text, name);
  require_columns(t, kGemmColumns, "calib-gemm");
  GemmMeasurements out;
  out.header = header_of(t);
  for (size_t i = 0; i < t.rows.size(); ++i) {
    GemmMeasurement m;
    m.line = t.row_lines[i];
    m.shape_class = t.text(i, "shape_class");
    m.dtype = t.text(i, "dtype");
    if (m.shape_class.empty() || m.dtype.empty())
      throw InputError(fmt::format("{}:{}: shape_class and dtype must not be empty", name, m.line));
    m.shape = {positive(t, i, "m"), positive(t, i, "n"), positive(t, i, "k"), positive(t, i, "batch")};
    m.seconds = positive(t, i, "median_time_us") * 1e-6;
    out.rows.push_back(std::move(m));
  }
  return out;
}

MemoryMeasurements parse_memory_measurements(const std::string& text, const std::string& name) {
  CsvTable t = parse_csv(text, name);
  require_columns(t, kMemoryColumns, "calib-memory");
  MemoryMeasurements out;
  out.header = header_of(t);
  std::map<std::string, const MemoryMeasurement*> previous;
  for (size_t i = 0; i < t.rows.size(); ++i) {
    MemoryMeasurement m;
    m.line = t.row_lines[i];
    m.kernel = t.text(i, "kernel");
    if (m.kernel.empty()) throw InputError(fmt::format("{}:{}: kernel must not be empty", name, m.line));
    m.bytes = positive(t, i, "bytes");
    m.seconds = positive(t, i, "median_time_us") * 1e-6;
    out.rows.push_back(std::move(m));
  }
  // calib-memory sweeps each kernel over increasing sizes; a decrease means two runs were pasted together
  // (or rows were lost), and a fit over such a file would silently mix machines or settings.
  for (size_t i = 0; i < out.rows.size(); ++i) {
    const auto& m = out.rows[i];
    auto it = previous.find(m.kernel);
    if (it != previous.end() && m.bytes <= it->second->bytes)
      throw InputError(
          fmt::format("{}:{}: {} bytes for kernel '{}' does not increase (line {} had {}): each kernel's "
                      "sizes must grow; "
                      "keep separate runs in separate files",
                      name, m.line, m.bytes, m.kernel, it->second->line, it->second->bytes));
    previous[m.kernel] = &m;
  }
  return out;
}

GemmMeasurements read_gemm_measurements(const std::string& path) {
  return parse_gemm_measurements(slurp(path), path);
}

MemoryMeasurements read_memory_measurements(const std::string& path) {
  return parse_memory_measurements(slurp(path), path);
}

}  // namespace podsim::calibration
