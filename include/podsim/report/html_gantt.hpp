// The timeline (Gantt chart) of one simulated step in the single-run report: a lane per pipeline stage,
// the device's work on its top row and the communication streams below it, each slice coloured by its
// category, idle time (the bubble) left as the lane's background. Built from the same source as the
// trace (report/trace.cpp): RunResult::plan.graph tasks and RunResult::replay task times.
#pragma once

#include <string>

#include "podsim/report/run_result.hpp"

namespace podsim::report::html {

const char* category_color(plan::Category c);
inline constexpr const char* kIdleColor = "#dde3ea";

// SVG and legend; "" when the run was not simulated. Slices narrower than a few pixels are merged (their
// tooltip lists what they hold), so a step of tens of thousands of tasks stays a small file.
std::string gantt_chart(const RunResult& r);

}  // namespace podsim::report::html
