// The task graph of a parameter-server step. Both PS builders (cpu_ps_builder, hierarchical_ps_builder)
// fold the cluster onto one lane, server 0 with its representative device 0, and put every other server's
// traffic on the network; so every stream and task of the graph belongs to that lane.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "podsim/plan/flow.hpp"
#include "podsim/workload/step_plan.hpp"

namespace podsim::workload {

// Both builders simulate a batch's mini-batches as at most this many rounds of tasks, each standing for
// minibatches / rounds of them: enough to show overlap between tiers, few enough to stay fast.
constexpr int kPsRounds = 8;

class PsStepGraph {
 public:
  // One lane: stage 0, representative device 0.
  PsStepGraph(std::string lane_kind, std::vector<std::string> lane_names);

  int add_stream(std::string name, bool device_busy = true);
  // The plan's index, or -1 (no communication) for an empty plan: a lone server has no one to talk to.
  int add_plan(const plan::CommPlan& plan);
  // A task of the lane: `seconds` of device time charged to `category`, then the phases of `plan` (-1:
  // none) charged to `comm`.
  int add(int stream, TaskKind kind, double seconds, Category category, std::vector<int> deps = {},
          int plan = -1, Category comm = Category::stream);

  TaskGraph take() { return std::move(graph_); }

 private:
  TaskGraph graph_;
};

}  // namespace podsim::workload
