// Errors that reach a user. Anything the user can fix (a typo in a YAML file, an impossible parallel
// configuration, a bad --set) is an InputError: the CLI prints its message and exits with status 2.
// Everything else is a bug and surfaces as std::logic_error / std::runtime_error with exit status 1.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

namespace podsim {

class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

// What did not fit when a configuration runs out of memory: the memory tier ("device HBM", "host DRAM",
// "host SSD", "wafer SRAM", "MemoryX", ...) and the bytes one unit of it (a device, a server, a wafer)
// needed and has. The tier matters because only device memory is in memory_per_device_GiB: a parameter
// server whose host DRAM overflows has GPUs well within their HBM.
struct MemoryShortfall {
  std::string tier;
  double needed_bytes = 0;
  double available_bytes = 0;
};

// A configuration that is valid input but cannot run, e.g. a model that does not fit in device memory.
// Reported in the results (status column) rather than as an error exit.
class InfeasibleConfig : public std::runtime_error {
 public:
  InfeasibleConfig(std::string status, const std::string& message)
      : std::runtime_error(message), status_(std::move(status)) {}
  // Status out_of_memory, with what did not fit.
  InfeasibleConfig(MemoryShortfall shortfall, const std::string& message)
      : std::runtime_error(message), status_("out_of_memory"), shortfall_(std::move(shortfall)) {}
  const std::string& status() const { return status_; }
  const std::optional<MemoryShortfall>& shortfall() const { return shortfall_; }

 private:
  std::string status_;
  std::optional<MemoryShortfall> shortfall_;
};

// A result that breaks physics or the accounting (MFU above 100%, a lane whose categories do not add up to
// the step, memory over capacity reported as ok, ...). It is a bug in podsim, never an answer: the CLI
// exits with status 1 naming the invariant and the inputs; a sweep records the point as `failed`.
class InvariantViolation : public std::logic_error {
 public:
  explicit InvariantViolation(const std::string& message) : std::logic_error(message) {}
};

}  // namespace podsim
