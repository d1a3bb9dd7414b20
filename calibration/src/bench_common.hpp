// What the calib-* microbenchmarks share: error checks, timing statistics, the command line, and the
// provenance header every CSV starts with (machine, device, clocks, driver and library versions, date,
// command), as "# key: value" lines that `podsim calibrate` reads back.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace calib {

[[noreturn]] void die(const std::string& message);
void check_cuda(cudaError_t status, const char* what, const char* file, int line);
#define CALIB_CUDA(call) ::calib::check_cuda((call), #call, __FILE__, __LINE__)

double median(std::vector<double> values);

// What a benchmark reports of its timed samples (seconds): the median, and the minimum as the noise floor.
struct Timing {
  double median_s = 0, min_s = 0;
};
Timing timing_of(const std::vector<double>& samples);  // samples must not be empty

// A pair of CUDA events around work launched on a stream: GPU time, without the host's launch latency.
class EventTimer {
 public:
  EventTimer() {
    CALIB_CUDA(cudaEventCreate(&start_));
    CALIB_CUDA(cudaEventCreate(&stop_));
  }
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  // Milliseconds from before to after what `launch` enqueues on `stream` (0: the default stream).
  template <typename Launch>
  float milliseconds(cudaStream_t stream, Launch&& launch) {
    CALIB_CUDA(cudaEventRecord(start_, stream));
    launch();
    CALIB_CUDA(cudaEventRecord(stop_, stream));
    CALIB_CUDA(cudaEventSynchronize(stop_));
    float ms = 0;
    CALIB_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  cudaEvent_t start_{}, stop_{};
};

// "--key value" and "--flag" arguments; unknown keys are errors (listing the valid ones).
class Args {
 public:
  Args(int argc, char** argv, const std::map<std::string, std::string>& defaults, const char* usage);
  std::string get(const std::string& key) const;
  double number(const std::string& key) const;
  std::vector<std::string> list(const std::string& key) const;  // comma-separated
  const std::string& command() const { return command_; }

 private:
  std::map<std::string, std::string> values_;
  std::string command_;
};

// Makes the GPU that --device names current and returns its index (for the tools that run on one GPU).
int select_device(const Args& args);
// Device and host facts for the provenance header, including the SM clock measured under load now.
std::map<std::string, std::string> device_provenance(int device);
// Measures the SM clock (MHz) by timing clock64() against the global nanosecond timer for ~20 ms.
double measure_sm_clock_mhz(int device);

// Opens `path` ("-" = stdout) and writes the '#' provenance lines.
FILE* open_csv(const std::string& path, const std::string& tool, const std::string& command,
               const std::map<std::string, std::string>& fields);

std::string utc_now();

}  // namespace calib
