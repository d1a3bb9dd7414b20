// Per-stage schedule programs -> tasks. Compute steps become tasks through a callback; each blocking
// point-to-point call becomes transfer tasks matched in order per channel (a transfer starts when both
// the sender and the receiver have posted the call, as with NCCL send/recv), optional gather tasks on
// the receiving side, and a zero-time marker that completes the call once all its parts are done. A call
// with asynchronous receives (StageStep::async_receives) completes with its sends; each of its receives
// completes at a marker placed before the next compute step that consumes it.
#pragma once

#include <functional>
#include <vector>

#include "podsim/workload/pipeline_schedule.hpp"
#include "podsim/workload/step_plan.hpp"

namespace podsim::workload {

struct PipelineCallbacks {
  // Adds the task(s) for one compute step on the stage's compute stream. `final_backward` is true for the
  // last backward step of a model chunk (its weight gradients are complete afterwards).
  std::function<void(int stage, const StageStep& step, bool final_backward)> compute;
  std::function<int(int from, int to)> transfer_plan;  // plan id for a transfer, -1 for none
  std::function<int(int to)> gather_plan;              // plan id for the receiver's gather, -1 for none
};

// Returns, per stage, the marker task that completes its pipeline (every call done).
std::vector<int> assemble_pipeline(TaskGraph& graph, const std::vector<StageProgram>& programs,
                                   const std::vector<int>& compute_streams,
                                   const PipelineCallbacks& callbacks);

// Per stage, the calls between its first and its last compute step that wait for a transfer they start
// (assemble_pipeline: a transfer starts no earlier than both sides' calls): every blocking call with a
// send or a receive, and an asynchronous call with an activation send. Each holds the stage for at least
// one transfer; an asynchronous call's gradient sends are waited at the next call that sends gradients,
// its receives before the step that consumes them, which compute in between may hide.
std::vector<int> blocking_transfer_calls(const std::vector<StageProgram>& programs);

}  // namespace podsim::workload
