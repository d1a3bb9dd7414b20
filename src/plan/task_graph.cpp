#include "podsim/plan/task_graph.hpp"

#include <stdexcept>

namespace podsim::plan {

const char* to_string(Category c) {
  return kCategoryNames.name(c);
}

const char* description(Category c) {
  switch (c) {
    case Category::compute: return "compute";
    case Category::tp: return "exposed tensor-parallel comm";
    case Category::ep: return "exposed expert all-to-all";
    case Category::pp: return "exposed pipeline comm";
    case Category::dp: return "exposed data-parallel comm";
    case Category::stream: return "exposed parameter streaming";
    case Category::storage: return "exposed host/SSD tiers";
    case Category::optimizer: return "optimizer step";
    case Category::cp: return "exposed context-parallel comm";
    default: return "?";
  }
}

const char* to_string(TaskKind k) {
  return kTaskKindNames.name(k);
}

int TaskGraph::add_compute(TaskKind kind, int stream, int stage, double seconds, Category category,
                           std::vector<int> deps) {
  return add_task({.kind = kind,
                   .stream = stream,
                   .stage = stage,
                   .deps = std::move(deps),
                   .compute_seconds = seconds,
                   .compute_category = category});
}

int TaskGraph::add_comm(TaskKind kind, int stream, int stage, int plan, Category category,
                        std::vector<int> deps) {
  return add_task({.kind = kind,
                   .stream = stream,
                   .stage = stage,
                   .deps = std::move(deps),
                   .plan = plan,
                   .comm_category = category});
}

int TaskGraph::add_stream(std::string name, int stage, int device, bool device_busy) {
  streams.push_back({std::move(name), stage, device, device_busy, -1});
  return static_cast<int>(streams.size()) - 1;
}

int TaskGraph::add_task(Task t) {
  int id = static_cast<int>(tasks.size());
  if (t.stream >= 0) {
    Stream& s = streams.at(t.stream);
    if (s.last_task >= 0) t.deps.push_back(s.last_task);
    s.last_task = id;
  }
  tasks.push_back(std::move(t));
  return id;
}

int TaskGraph::add_plan(CommPlan plan) {
  if (plan.empty()) return -1;
  plans.push_back(std::move(plan));
  return static_cast<int>(plans.size()) - 1;
}

std::vector<int> TaskGraph::topological_order() const {
  const int n = static_cast<int>(tasks.size());
  std::vector<int> indegree(n, 0);
  std::vector<std::vector<int>> successors(n);
  for (int i = 0; i < n; ++i)
    for (int d : tasks[i].deps) {
      if (d < 0 || d >= n) throw std::logic_error("task depends on a task that does not exist");
      successors[d].push_back(i);
      indegree[i]++;
    }
  std::vector<int> order;
  order.reserve(n);
  for (int i = 0; i < n; ++i)
    if (indegree[i] == 0) order.push_back(i);
  for (size_t head = 0; head < order.size(); ++head)
    for (int s : successors[order[head]])
      if (--indegree[s] == 0) order.push_back(s);
  if (static_cast<int>(order.size()) != n)
    throw std::logic_error("task graph has a cycle (a schedule deadlock)");
  return order;
}

}  // namespace podsim::plan
