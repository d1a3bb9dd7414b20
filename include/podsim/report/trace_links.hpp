// The trace's link utilization counters: one counter track per link class ("links" process, after the
// lanes) with the percentage of the class's capacity in use over the step. Each communication task's bytes
// on a class (RunResult::plan_class_bytes) are spread evenly over the task's communication time, so the
// integral of a track times the class capacity is the bytes `podsim run --links` counts for that class.
#pragma once

#include <nlohmann/json.hpp>

#include "podsim/report/run_result.hpp"

namespace podsim::report {

// Trace events (metadata and "C" counters) to append; empty without RunResult::plan_class_bytes.
nlohmann::ordered_json link_utilization_events(const RunResult& r);

}  // namespace podsim::report
