// Everything one simulated training step produced, and the per-stage accounting of where its time went.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "podsim/engine/replay.hpp"
#include "podsim/workload/megatron_builder.hpp"

namespace podsim::report {

// Seconds of the step spent on each activity by one pipeline stage. Overlapping activities are charged
// once, to the first of: compute, exposed TP communication, optimizer, exposed pipeline communication,
// exposed data-parallel communication; time with nothing to do is the pipeline bubble. The six add up
// to the step time.
struct StageBreakdown {
  int stage = 0;
  double compute = 0, tp = 0, optimizer = 0, pp = 0, dp = 0, bubble = 0;
  double total() const { return compute + tp + optimizer + pp + dp + bubble; }
};

struct RunResult {
  std::string topology_file, workload_file, topology_name, workload_name;
  std::string status = "ok";  // ok | out_of_memory
  std::string status_detail;
  workload::TrainingStep step;
  engine::ReplayResult replay;
  std::vector<StageBreakdown> stages;
  StageBreakdown mean;  // average over stages (also adds up to the step time)
  int devices = 0;      // devices the job uses (tp * pp * dp)
  int topology_devices = 0;
  double device_memory_capacity = 0;
  std::string device_name;
  std::vector<std::string> search_log;  // how auto settings were chosen

  double step_time() const { return replay.makespan; }
  double tflops_per_device() const;
  double mfu() const;
  double hfu() const;
  double memory_per_device() const;  // peak over stages, bytes
  double tokens_per_s() const;
};

std::vector<StageBreakdown> stage_breakdown(const workload::TaskGraph& graph,
                                            const engine::ReplayResult& replay);
StageBreakdown mean_breakdown(const std::vector<StageBreakdown>& stages);

}  // namespace podsim::report
