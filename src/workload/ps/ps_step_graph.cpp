#include "podsim/workload/ps/ps_step_graph.hpp"

#include <utility>

namespace podsim::workload {

PsStepGraph::PsStepGraph(std::string lane_kind, std::vector<std::string> lane_names) {
  graph_.stages = 1;
  graph_.stage_devices = {0};
  graph_.lane_kind = std::move(lane_kind);
  graph_.lane_names = std::move(lane_names);
}

int PsStepGraph::add_stream(std::string name, bool device_busy) {
  return graph_.add_stream(std::move(name), 0, 0, device_busy);
}

int PsStepGraph::add_plan(const plan::CommPlan& plan) {
  return plan.empty() ? -1 : graph_.add_plan(plan);
}

int PsStepGraph::add(int stream, TaskKind kind, double seconds, Category category, std::vector<int> deps,
                     int plan, Category comm) {
  return graph_.add_task({.kind = kind,
                          .stream = stream,
                          .stage = 0,
                          .deps = std::move(deps),
                          .compute_seconds = seconds,
                          .compute_category = category,
                          .plan = plan,
                          .comm_category = comm});
}

}  // namespace podsim::workload
