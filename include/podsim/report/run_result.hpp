// Everything one simulated training step produced, and the per-lane accounting of where its time went.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "podsim/core/error.hpp"
#include "podsim/engine/replay.hpp"
#include "podsim/report/link_class_bytes.hpp"
#include "podsim/report/link_traffic.hpp"
#include "podsim/report/provenance.hpp"
#include "podsim/report/straggler_outcome.hpp"
#include "podsim/workload/step_plan.hpp"

namespace podsim::report {

// Seconds of the step one lane (pipeline stage, device class) spent per category. Overlapping activities
// are charged once, to the first category in workload::kChargeOrder; time with nothing to do is idle
// (the pipeline bubble). Categories and idle add up to the step time.
struct StageBreakdown {
  int stage = 0;
  std::array<double, workload::kCategories> seconds{};
  double idle = 0;
  double operator[](workload::Category c) const { return seconds[static_cast<int>(c)]; }
  double total() const;
};

// One candidate of an auto search (micro_batch: auto, virtual_stages: auto, ...), for result.json.
struct SearchRow {
  std::string candidate;  // "micro_batch=2 virtual_stages=1"
  std::string status;     // ok | out_of_memory | ...
  double step_time = 0;   // seconds; 0 unless status is ok
  double samples_per_step = 0;
  bool chosen = false;  // the candidate the run reports
};

struct RunResult {
  std::string topology_file, workload_file, topology_name, workload_name, workload_kind;
  std::string status = "ok";  // ok | out_of_memory | ...
  std::string status_detail;
  // For out_of_memory: what did not fit, as the workload reported it (InfeasibleConfig::shortfall()).
  std::optional<MemoryShortfall> memory_shortfall;
  workload::StepPlan plan;
  engine::ReplayResult replay;
  std::vector<StageBreakdown> stages;
  StageBreakdown mean;  // average over lanes (also adds up to the step time)
  int topology_devices = 0;
  std::string server_usage;  // "64 of each server's 72 GPUs" under node.devices_used; "" = every GPU
  double device_memory_capacity = 0;
  std::string device_name;
  std::vector<std::string> search_log;  // how auto settings were chosen
  std::vector<SearchRow> search;        // the same, one row per candidate (empty without a search)
  // Per plan.graph.plans entry: the link classes its flows cross (report/link_classes.hpp); empty when
  // the driver did not compute them (the trace then leaves the detail out).
  std::vector<std::string> plan_link_classes;
  // Slow devices (topology `slowdown:` / `straggler:`): the balanced step and what gates this one.
  std::optional<StragglerOutcome> stragglers;
  Provenance provenance;  // filled by driver::simulate(RunRequest) for result.json
  // Bytes per link class and the hottest links (report/link_traffic.hpp), when the run asked (--links).
  std::optional<LinkTraffic> links;
  // Bytes per plan and link class, when the run is traced (--trace): the trace's link utilization tracks.
  std::optional<PlanClassBytes> plan_class_bytes;

  bool ok() const { return status == "ok"; }
  int devices() const { return plan.devices; }
  double step_time() const { return replay.makespan; }
  double tflops_per_device() const;
  double mfu() const;         // model FLOPs with non-causal attention (StepPlan::model_flops)
  double mfu_causal() const;  // with causal attention (StepPlan::model_flops_causal), <= mfu
  double hfu() const;
  double memory_per_device() const;  // peak over lanes, bytes
  // What did not fit in an out_of_memory run: memory_shortfall when the workload said, otherwise the
  // device memory when a lane needs more than it has; nothing when the run is not out_of_memory or the
  // culprit is unknown.
  std::optional<MemoryShortfall> out_of_memory() const;
  double tokens_per_s() const;
  double samples_per_s() const;
  std::string setting(const std::string& key) const;  // "" when the plan has no such setting
};

std::vector<StageBreakdown> stage_breakdown(const workload::TaskGraph& graph,
                                            const engine::ReplayResult& replay);
StageBreakdown mean_breakdown(const std::vector<StageBreakdown>& stages);

}  // namespace podsim::report
