// The simulated timeline of one step in the Chrome / Perfetto trace-event JSON format
// (https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU): one process per lane
// (pipeline stage, device class), one thread per stream of the lane (compute, data-parallel, parameter
// gather) and one per direction and peer of its point-to-point transfers ("send to stage 3", "receive from
// stage 1"). Open it in ui.perfetto.dev or chrome://tracing.
//
// Structure (checked by tests/test_trace.cpp for every workload kind):
// - Times are integer nanoseconds computed once per slice (begin and end rounded, dur = end - begin), written
//   as microseconds (ts = ns / 1000), so ts + dur of one slice is exactly the ts of the next.
// - No two slices of one thread overlap: slices that would (transfers in flight at once between the same
//   pair of stages) go to a further thread of the same name with " #2", " #3", ... appended.
// - Details are `args` (microbatch, chunk, bytes, flows, peer, link classes, device seconds), so that slice
//   names are few ("forward", "send activations", "parameter gather", ...).
// - Flow arrows ("s" / "f" with bp "e") lead from each send to the receiving lane's first task that waits
//   for it.
#pragma once

#include <string>

#include "podsim/report/run_result.hpp"

namespace podsim::report {

std::string chrome_trace(const RunResult& r);

}  // namespace podsim::report
