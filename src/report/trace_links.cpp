#include "podsim/report/trace_links.hpp"

#include <cmath>
#include <cstdint>
#include <map>

namespace podsim::report {
namespace {

using Json = nlohmann::ordered_json;

std::int64_t ns(double seconds) {  // the same integer nanosecond ticks as the trace's slices
  return std::llround(seconds * 1e9);
}

// Per boundary time: the change of each class's byte rate (bytes per ns) and of its active task count
// (the count makes an idle class read exactly 0, whatever the rounding of the summed rates).
struct Change {
  std::vector<double> rate;
  std::vector<int> active;
};

std::map<std::int64_t, Change> rate_changes(const RunResult& r, const PlanClassBytes& pcb) {
  const auto& g = r.plan.graph;
  const size_t classes = pcb.classes.size();
  std::map<std::int64_t, Change> changes;
  auto at = [&](std::int64_t t) -> Change& {
    auto [it, fresh] = changes.try_emplace(t);
    if (fresh) it->second = {std::vector<double>(classes, 0.0), std::vector<int>(classes, 0)};
    return it->second;
  };
  for (size_t i = 0; i < g.tasks.size() && i < r.replay.tasks.size(); ++i) {
    const auto& t = g.tasks[i];
    if (t.plan < 0 || static_cast<size_t>(t.plan) >= pcb.bytes.size()) continue;
    const auto& times = r.replay.tasks[i];
    // Communication follows the task's device time, as the trace draws it.
    std::int64_t b = t.compute_seconds > 0 ? ns(times.compute_end) : ns(times.start), e = ns(times.end);
    if (e <= b) continue;
    for (size_t c = 0; c < classes; ++c) {
      double bytes = pcb.bytes[static_cast<size_t>(t.plan)][c];
      if (bytes <= 0) continue;
      double rate = bytes / static_cast<double>(e - b);
      at(b).rate[c] += rate, at(b).active[c] += 1;
      at(e).rate[c] -= rate, at(e).active[c] -= 1;
    }
  }
  return changes;
}

}  // namespace

Json link_utilization_events(const RunResult& r) {
  Json events = Json::array();
  if (!r.plan_class_bytes || r.plan_class_bytes->classes.empty()) return events;
  const auto& pcb = *r.plan_class_bytes;
  const int pid = r.plan.graph.stages;  // after the lanes
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", "links"}}}});
  events.push_back(
      {{"name", "process_sort_index"}, {"ph", "M"}, {"pid", pid}, {"args", {{"sort_index", pid}}}});
  auto changes = rate_changes(r, pcb);
  changes.try_emplace(
      0, Change{std::vector<double>(pcb.classes.size(), 0.0), std::vector<int>(pcb.classes.size(), 0)});
  std::vector<double> rate(pcb.classes.size(), 0.0);
  std::vector<int> active(pcb.classes.size(), 0);
  for (const auto& [t, ch] : changes) {
    Json args = Json::object();
    for (size_t c = 0; c < pcb.classes.size(); ++c) {
      rate[c] += ch.rate[c];
      active[c] += ch.active[c];
      if (active[c] == 0) rate[c] = 0;
      // bytes per ns -> bytes per s, over the capacity of the whole class.
      args[pcb.classes[c]] = pcb.capacity[c] > 0 ? 100.0 * rate[c] * 1e9 / pcb.capacity[c] : 0.0;
    }
    events.push_back({{"name", "link utilization % (of each class's capacity)"},
                      {"ph", "C"},
                      {"pid", pid},
                      {"ts", static_cast<double>(t) / 1000.0},
                      {"args", args}});
  }
  return events;
}

}  // namespace podsim::report
