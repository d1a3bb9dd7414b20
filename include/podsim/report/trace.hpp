// The simulated timeline of one step in the Chrome / Perfetto trace-event format: one process per lane
// (pipeline stage), one thread per stream (compute, data-parallel) plus one for transfers; device time and
// communication as complete ("X") slices. Open it in ui.perfetto.dev or chrome://tracing.
#pragma once

#include <string>

#include "podsim/report/run_result.hpp"

namespace podsim::report {

std::string chrome_trace(const RunResult& r);

}  // namespace podsim::report
