// The CSV files the calib-gemm and calib-memory microbenchmarks write (calibration/src/): one row per
// measurement, '#' lines before the header carrying provenance as "key: value" (machine, device, SM count,
// clocks, driver, library versions, date, command).
//
// calib-gemm columns (required): shape_class, dtype, m, n, k, batch, median_time_us
// calib-memory columns (required): kernel, bytes, median_time_us   (bytes = read + written)
// Other columns (achieved_TFLOPs, achieved_GBps, min_time_us, repeats, ...) are allowed and ignored.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "podsim/calibration/compute_model.hpp"

namespace podsim::calibration {

struct GemmMeasurement {
  std::string shape_class;  // square, transformer, skinny, small, batched_attention, sustained, ...
  std::string dtype;        // fp16, bf16, fp8, ...
  GemmShape shape;
  double seconds = 0;  // median over repeats
  int line = 0;
};

struct MemoryMeasurement {
  std::string kernel;  // copy, read, write, elementwise, layernorm, softmax, ...
  double bytes = 0;    // bytes read + written
  double seconds = 0;
  int line = 0;
};

struct MeasurementHeader {
  std::string file;
  std::map<std::string, std::string> fields;  // "# key: value" lines
  std::string get(const std::string& key, const std::string& fallback = "") const;
};

struct GemmMeasurements {
  MeasurementHeader header;
  std::vector<GemmMeasurement> rows;
};

struct MemoryMeasurements {
  MeasurementHeader header;
  std::vector<MemoryMeasurement> rows;
};

// Throw InputError naming file and line: missing columns (listing the required ones), truncated rows,
// values that are not positive numbers, sizes of one memory kernel that do not increase.
GemmMeasurements read_gemm_measurements(const std::string& path);
MemoryMeasurements read_memory_measurements(const std::string& path);
GemmMeasurements parse_gemm_measurements(const std::string& text, const std::string& name);
MemoryMeasurements parse_memory_measurements(const std::string& text, const std::string& name);

}  // namespace podsim::calibration
