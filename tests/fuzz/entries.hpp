// What the fuzz targets exercise, shared with the GoogleTest that replays the corpus and the regressions
// (so every input libFuzzer ever found stays tested in the normal build). Each function returns when the
// input is accepted or rejected with a clear error (InputError / InfeasibleConfig); anything else escapes
// as an exception or a sanitizer report, which the fuzzer records as a crash.
#pragma once

#include <string>

namespace podsim::fuzz {

void topology_yaml(const std::string& text);
void workload_yaml(const std::string& text);
void study_yaml(const std::string& text);
void csv_text(const std::string& text);
void nccl_tests_log(const std::string& text);  // nccl-tests output and calib-nccl CSV
void kernel_csv(const std::string& text);      // calib-gemm and calib-memory CSV

}  // namespace podsim::fuzz
