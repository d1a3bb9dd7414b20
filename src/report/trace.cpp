#include "podsim/report/trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "podsim/core/units.hpp"
#include "podsim/report/trace_links.hpp"

namespace podsim::report {
namespace {

using plan::TaskKind;
using Json = nlohmann::ordered_json;

// One slice before it is given a thread: [begin, end) in integer nanoseconds.
struct Slice {
  std::int64_t begin = 0, end = 0;
  int task = -1;
  bool comm = false;  // the communication part of the task (after its device time)
};

// The slices of one (lane, named track), and the threads they were packed into.
struct Track {
  int pid = 0;
  int order = 0;  // thread sort order within the lane
  std::string name;
  std::vector<Slice> slices;
  std::vector<int> tids;  // per packed row
};

std::int64_t ns(double seconds) {
  return std::llround(seconds * 1e9);
}
double us(std::int64_t nanoseconds) {
  return static_cast<double>(nanoseconds) / 1000.0;
}

bool is_param_gather_stream(const plan::TaskGraph& g, const plan::Task& t) {
  const std::string suffix = "parameter gather";
  if (t.stream < 0) return false;
  const std::string& n = g.streams[t.stream].name;
  return n.size() >= suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string slice_name(const plan::TaskGraph& g, const plan::Task& t, bool comm) {
  std::string what;
  switch (t.kind) {
    case TaskKind::transfer: what = t.chunk == 0 ? "send activations" : "send gradients"; break;
    case TaskKind::gather: what = "gather activations"; break;
    case TaskKind::dp:
      // Parameter all-gathers (ZeRO, FSDP) run on the lane's gather stream, reductions on its dp stream.
      what = is_param_gather_stream(g, t) ? "parameter gather" : "gradient reduction";
      break;
    case TaskKind::embedding_sync: what = "embedding gradient all-reduce"; break;
    case TaskKind::sync: what = "model-parallel sync"; break;
    case TaskKind::optimizer: what = "optimizer step"; break;
    default: what = plan::to_string(t.kind); break;
  }
  if (comm && (t.kind == TaskKind::forward || t.kind == TaskKind::backward || t.kind == TaskKind::recompute))
    what += fmt::format(" {} comm", plan::to_string(t.comm_category));
  return what;
}

std::string lane_name(const plan::TaskGraph& g, int lane) {
  return static_cast<size_t>(lane) < g.lane_names.size() ? g.lane_names[lane] : fmt::format("stage {}", lane);
}

// The track a task's slice goes to on `lane`: its stream, or for a stream-less task the direction and
// peer of the transfer (so that a stage's sends and its peer's sends never share a thread).
std::pair<std::string, int> track_of(const plan::TaskGraph& g, const plan::Task& t, int lane) {
  if (t.stream >= 0) {
    const auto& s = g.streams[t.stream];
    return {s.name, s.device_busy ? 0 : 1};
  }
  if (t.kind == TaskKind::transfer && t.peer_stage >= 0 && t.peer_stage != t.stage) {
    if (lane == t.stage) return {"send to " + lane_name(g, t.peer_stage), 2};
    return {"receive from " + lane_name(g, t.stage), 3};
  }
  return {plan::to_string(t.kind), 4};
}

// Interval partitioning: each slice goes to the first row whose last slice has ended, so no two slices of
// one row overlap (partial overlaps and exact duplicates are what trace viewers cannot draw).
std::vector<int> pack(std::vector<Slice>& slices) {
  std::sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) {
    return std::tie(a.begin, a.end, a.task, a.comm) < std::tie(b.begin, b.end, b.task, b.comm);
  });
  std::vector<std::int64_t> row_end;
  std::vector<int> row(slices.size());
  for (size_t i = 0; i < slices.size(); ++i) {
    size_t r = 0;
    while (r < row_end.size() && row_end[r] > slices[i].begin) ++r;
    if (r == row_end.size()) row_end.push_back(0);
    row_end[r] = slices[i].end;
    row[i] = static_cast<int>(r);
  }
  return row;
}

double plan_bytes(const plan::CommPlan& p) {
  double bytes = 0;
  for (const auto& phase : p)
    for (const auto& f : phase.flows) bytes += f.bytes;
  return bytes;
}

Json slice_args(const RunResult& r, const plan::Task& t, int lane, bool comm) {
  const auto& g = r.plan.graph;
  Json a = Json::object();
  a["kind"] = plan::to_string(t.kind);
  if (t.microbatch >= 0) a["microbatch"] = t.microbatch;
  if (t.chunk >= 0) a["chunk"] = t.chunk;
  if (t.peer_stage >= 0 && t.peer_stage != t.stage)
    a["peer"] = lane_name(g, lane == t.stage ? t.peer_stage : t.stage);
  if (!comm) {
    a["category"] = plan::to_string(t.compute_category);
    a["device_seconds"] = t.compute_seconds;
    return a;
  }
  a["category"] = plan::to_string(t.comm_category);
  if (t.plan >= 0) {
    const auto& p = g.plans[t.plan];
    size_t flows = 0;
    for (const auto& phase : p) flows += phase.flows.size();
    a["bytes"] = plan_bytes(p);
    a["flows"] = flows;
    a["phases"] = p.size();
    if (static_cast<size_t>(t.plan) < r.plan_link_classes.size())
      a["link_class"] = r.plan_link_classes[t.plan];
  }
  return a;
}

// Lanes a task is drawn on: its own (every lane for a task of none), and a transfer's receiving lane.
std::vector<int> lanes_of(const plan::TaskGraph& g, const plan::Task& t) {
  std::vector<int> lanes;
  if (t.stage >= 0)
    lanes.push_back(t.stage);
  else
    for (int s = 0; s < g.stages; ++s) lanes.push_back(s);
  if (t.peer_stage >= 0 && t.peer_stage != t.stage) lanes.push_back(t.peer_stage);
  return lanes;
}

std::vector<Track> collect_tracks(const RunResult& r) {
  const auto& g = r.plan.graph;
  std::map<std::pair<int, std::string>, size_t> index;
  std::vector<Track> tracks;
  for (size_t i = 0; i < g.tasks.size(); ++i) {
    const auto& t = g.tasks[i];
    const auto& times = r.replay.tasks[i];
    std::int64_t b = ns(times.start), c = ns(times.compute_end), e = ns(times.end);
    if (t.compute_seconds <= 0) c = b;  // no device time: the whole task is communication
    for (int lane : lanes_of(g, t)) {
      auto [name, order] = track_of(g, t, lane);
      auto [it, fresh] = index.try_emplace({lane, name}, tracks.size());
      if (fresh) tracks.push_back({lane, order, name, {}, {}});
      auto& slices = tracks[it->second].slices;
      if (c > b) slices.push_back({b, c, static_cast<int>(i), false});
      if (e > c) slices.push_back({c, e, static_cast<int>(i), true});
    }
  }
  std::stable_sort(tracks.begin(), tracks.end(), [](const Track& a, const Track& b) {
    return std::tie(a.pid, a.order) < std::tie(b.pid, b.order);
  });
  return tracks;
}

// Where each task's first slice was drawn on each lane.
struct Placed {
  int tid = 0;
  std::int64_t begin = 0, end = 0;
  // Flow events bind to the slice enclosing their ts: its middle is inside it whatever the viewer does
  // with events at equal times.
  double middle_us() const { return us(begin + (end - begin) / 2); }
};
using Placement = std::map<std::pair<int, int>, Placed>;  // (task, lane)

void lane_metadata(const plan::TaskGraph& g, Json& events) {
  for (int s = 0; s < g.stages; ++s) {
    events.push_back(
        {{"name", "process_name"}, {"ph", "M"}, {"pid", s}, {"args", {{"name", lane_name(g, s)}}}});
    events.push_back(
        {{"name", "process_sort_index"}, {"ph", "M"}, {"pid", s}, {"args", {{"sort_index", s}}}});
  }
}

void emit_tracks(const RunResult& r, std::vector<Track>& tracks, Json& events, Placement& placed) {
  const auto& g = r.plan.graph;
  std::map<int, int> next_tid;  // per lane
  for (auto& tr : tracks) {
    std::vector<int> row = pack(tr.slices);
    int rows = tr.slices.empty() ? 0 : *std::max_element(row.begin(), row.end()) + 1;
    for (int k = 0; k < rows; ++k) {
      int tid = ++next_tid[tr.pid];
      tr.tids.push_back(tid);
      std::string name = k == 0 ? tr.name : fmt::format("{} #{}", tr.name, k + 1);
      events.push_back(
          {{"name", "thread_name"}, {"ph", "M"}, {"pid", tr.pid}, {"tid", tid}, {"args", {{"name", name}}}});
      events.push_back({{"name", "thread_sort_index"},
                        {"ph", "M"},
                        {"pid", tr.pid},
                        {"tid", tid},
                        {"args", {{"sort_index", tid}}}});
    }
    for (size_t i = 0; i < tr.slices.size(); ++i) {
      const Slice& s = tr.slices[i];
      const auto& t = g.tasks[s.task];
      int tid = tr.tids[row[i]];
      placed.try_emplace({s.task, tr.pid}, Placed{tid, s.begin, s.end});
      events.push_back({{"name", slice_name(g, t, s.comm)},
                        {"cat", plan::to_string(s.comm ? t.comm_category : t.compute_category)},
                        {"ph", "X"},
                        {"pid", tr.pid},
                        {"tid", tid},
                        {"ts", us(s.begin)},
                        {"dur", us(s.end - s.begin)},
                        {"args", slice_args(r, t, tr.pid, s.comm)}});
    }
  }
}

// Flow arrows from each pipeline send to the first task on the receiving lane that waits for it (directly
// or through the gather that completes the transfer); the receive slice itself when none is drawn.
void emit_flows(const plan::TaskGraph& g, const Placement& placed, Json& events) {
  std::vector<std::vector<int>> dependents(g.tasks.size());
  for (size_t j = 0; j < g.tasks.size(); ++j)
    for (int d : g.tasks[j].deps) dependents[d].push_back(static_cast<int>(j));
  int id = 0;
  for (size_t i = 0; i < g.tasks.size(); ++i) {
    const auto& t = g.tasks[i];
    if (t.kind != TaskKind::transfer || t.peer_stage < 0 || t.peer_stage == t.stage) continue;
    auto from = placed.find({static_cast<int>(i), t.stage});
    if (from == placed.end()) continue;
    std::vector<int> waiting = dependents[i];
    for (int d : dependents[i])
      if (g.tasks[d].kind == TaskKind::gather)
        waiting.insert(waiting.end(), dependents[d].begin(), dependents[d].end());
    const Placed* to = nullptr;
    for (int w : waiting) {
      if (g.tasks[w].kind == TaskKind::gather) continue;
      auto it = placed.find({w, t.peer_stage});
      if (it != placed.end() && (!to || it->second.begin < to->begin)) to = &it->second;
    }
    if (!to) {
      auto it = placed.find({static_cast<int>(i), t.peer_stage});
      if (it == placed.end()) continue;
      to = &it->second;
    }
    ++id;
    events.push_back({{"name", "pipeline transfer"},
                      {"cat", "pp"},
                      {"ph", "s"},
                      {"id", id},
                      {"pid", t.stage},
                      {"tid", from->second.tid},
                      {"ts", from->second.middle_us()}});
    events.push_back({{"name", "pipeline transfer"},
                      {"cat", "pp"},
                      {"ph", "f"},
                      {"bp", "e"},
                      {"id", id},
                      {"pid", t.peer_stage},
                      {"tid", to->tid},
                      {"ts", to->middle_us()}});
  }
}

// A counter track per lane with its memory categories in GiB. The memory model gives one figure per
// category for the whole step (its peak), so the counter is constant from 0 to the step's end; the track's
// name says so, since a counter's args may only hold numbers.
void emit_memory_counters(const RunResult& r, Json& events) {
  const auto& mem = r.plan.memory;
  for (size_t s = 0; s < mem.size() && s < static_cast<size_t>(r.plan.graph.stages); ++s) {
    const auto& m = mem[s];
    Json args = {{"weights", m.weights / GiB},     {"gradients", m.gradients / GiB},
                 {"optimizer", m.optimizer / GiB}, {"activations", m.activations / GiB},
                 {"buffers", m.buffers / GiB},     {"framework", m.framework / GiB}};
    for (double t : {0.0, us(ns(r.step_time()))})
      events.push_back({{"name", "memory GiB (peak of the step, constant)"},
                        {"ph", "C"},
                        {"pid", static_cast<int>(s)},
                        {"ts", t},
                        {"args", args}});
  }
}

}  // namespace

std::string chrome_trace(const RunResult& r) {
  const auto& g = r.plan.graph;
  Json events = Json::array();
  lane_metadata(g, events);
  std::vector<Track> tracks = collect_tracks(r);
  Placement placed;
  emit_tracks(r, tracks, events, placed);
  emit_flows(g, placed, events);
  emit_memory_counters(r, events);
  for (auto& e : link_utilization_events(r)) events.push_back(std::move(e));
  Json trace = {{"otherData",
                 {{"generator", "podsim"},
                  {"workload", r.workload_name},
                  {"topology", r.topology_name},
                  {"step_time_s", r.step_time()}}},
                {"traceEvents", events}};
  return trace.dump() + "\n";
}

}  // namespace podsim::report
