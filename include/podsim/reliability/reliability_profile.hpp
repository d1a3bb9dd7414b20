// What fails how often, how fast checkpoints move, how long a restart takes: the assumptions of a goodput
// estimate, read from a file in calibration/reliability/ (every figure with its source) and --set
// goodput.<key>=<value> overrides.
#pragma once

#include <string>
#include <vector>

#include "podsim/core/config_node.hpp"

namespace podsim::reliability {

// The unit a failure rate is counted per. `gpu` also carries rates that grow with the job's size without
// being hardware (software bugs, collective timeouts); `link` is a scale-out cable with its switch ports.
enum class FailureUnit { gpu, host, nic, switch_, link };
const char* to_string(FailureUnit u);

struct ComponentFailures {
  std::string name;  // "gpu", "host", "network", ...: the profile's key
  FailureUnit per = FailureUnit::gpu;
  double mtbf_hours = 0;  // mean time between failures of ONE unit
  std::string source;
};

struct ReliabilityProfile {
  std::string name, file;
  std::vector<ComponentFailures> failures;
  double storage_write_bytes_per_s = 0;  // aggregate of the storage tier
  double storage_read_bytes_per_s = 0;
  double node_write_bytes_per_s = 0;  // each host's path to storage; 0 = not the limit
  // Asynchronous checkpointing (Megatron-Core async_save, PyTorch DCP async_save): training is blocked
  // only while each GPU copies its shard to host memory at snapshot_bytes_per_s; the write to storage runs
  // behind the next steps (the next checkpoint cannot start before it is done).
  bool async_checkpoint = false;
  double snapshot_bytes_per_s = 0;
  double restart_seconds = 0;            // detection, rescheduling, process start, NCCL setup, warm-up
  double interval_minutes = 0;           // 0 = auto (the optimum)
  double train_tokens = 0;               // 0 = report the time per 1e12 tokens
  double checkpoint_bytes_override = 0;  // 0 = from the model (weights + optimizer state)
  unsigned long long seed = 1;
  int monte_carlo_trials = 200;
};

// Loads `file` with `overrides` (dotted paths below the document root, e.g. restart_minutes=5) applied.
// InputError naming the file:line and field for every bad value or unknown key.
ReliabilityProfile load_reliability_profile(const std::string& file, const Overrides& overrides);

}  // namespace podsim::reliability
