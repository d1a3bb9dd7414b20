#include "podsim/report/trace.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace podsim::report {
namespace {

using workload::Category;

std::string slice_name(const workload::Task& t, bool comm) {
  std::string what;
  switch (t.kind) {
    case plan::TaskKind::forward: what = "forward"; break;
    case plan::TaskKind::backward: what = "backward"; break;
    case plan::TaskKind::transfer: what = t.chunk == 0 ? "send activations" : "send gradients"; break;
    case plan::TaskKind::gather: what = "gather activations"; break;
    case plan::TaskKind::dp: what = "gradient reduction"; break;
    case plan::TaskKind::embedding_sync: what = "embedding gradient all-reduce"; break;
    case plan::TaskKind::sync: what = "model-parallel sync"; break;
    case plan::TaskKind::optimizer: what = "optimizer step"; break;
    default: what = "task"; break;
  }
  if (comm && (t.kind == plan::TaskKind::forward || t.kind == plan::TaskKind::backward))
    what += " " + std::string(workload::to_string(t.comm_category)) + " comm";
  if (t.microbatch >= 0 && (t.kind == plan::TaskKind::forward || t.kind == plan::TaskKind::backward))
    what += fmt::format(" mb {}", t.microbatch);
  if (t.chunk > 0 && (t.kind == plan::TaskKind::forward || t.kind == plan::TaskKind::backward))
    what += fmt::format(" chunk {}", t.chunk);
  return what;
}

}  // namespace

std::string chrome_trace(const RunResult& r) {
  const auto& g = r.plan.graph;
  nlohmann::json events = nlohmann::json::array();
  for (int s = 0; s < g.stages; ++s) {
    std::string lane =
        static_cast<size_t>(s) < g.lane_names.size() ? g.lane_names[s] : fmt::format("stage {}", s);
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", s}, {"args", {{"name", lane}}}});
    events.push_back(
        {{"name", "process_sort_index"}, {"ph", "M"}, {"pid", s}, {"args", {{"sort_index", s}}}});
    for (int tid : {1, 2, 3})
      events.push_back({{"name", "thread_name"},
                        {"ph", "M"},
                        {"pid", s},
                        {"tid", tid},
                        {"args",
                         {{"name", tid == 1   ? "device (compute stream)"
                                   : tid == 2 ? "data-parallel stream"
                                              : "transfers"}}}});
  }
  auto slice = [&](int pid, int tid, const std::string& name, const char* cat, double begin, double end) {
    if (end <= begin) return;
    events.push_back({{"name", name},
                      {"cat", cat},
                      {"ph", "X"},
                      {"pid", pid},
                      {"tid", tid},
                      {"ts", begin * 1e6},
                      {"dur", (end - begin) * 1e6}});
  };
  for (size_t i = 0; i < g.tasks.size(); ++i) {
    const auto& t = g.tasks[i];
    const auto& times = r.replay.tasks[i];
    int tid = t.stream < 0 ? 3 : g.streams[t.stream].device_busy ? 1 : 2;
    std::vector<int> lanes;
    if (t.stage >= 0)
      lanes.push_back(t.stage);
    else
      for (int s = 0; s < g.stages; ++s) lanes.push_back(s);
    if (t.peer_stage >= 0 && t.peer_stage != t.stage) lanes.push_back(t.peer_stage);
    for (int lane : lanes) {
      if (t.compute_seconds > 0)
        slice(lane, tid, slice_name(t, false), workload::to_string(t.compute_category), times.start,
              times.start + t.compute_seconds);
      slice(lane, tid, slice_name(t, true), workload::to_string(t.comm_category), times.compute_end,
            times.end);
    }
  }
  nlohmann::json trace = {{"displayTimeUnit", "ms"},
                          {"otherData",
                           {{"generator", "podsim"},
                            {"workload", r.workload_name},
                            {"topology", r.topology_name},
                            {"step_time_s", r.step_time()}}},
                          {"traceEvents", events}};
  return trace.dump() + "\n";
}

}  // namespace podsim::report
