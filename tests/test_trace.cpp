// The --trace output: structurally valid for Perfetto's JSON importer and the legacy Chrome viewer, in every
// workload kind. Checks what the trace-event format requires (ph, ts, dur, pid, tid; "s"/"f" flow events
// sharing id, name and cat and each binding to a slice that encloses its ts, "bp": "e" on the end) and
// what Perfetto cannot draw: slices of one thread that overlap partly, exact duplicates.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "podsim/driver/simulation.hpp"
#include "podsim/report/trace.hpp"
#include "test_helpers.hpp"

namespace podsim {
namespace {

using nlohmann::json;
using podsim::testing::source_path;

struct Interval {
  long long begin, end;
  std::string name;
};

// Microseconds as Perfetto reads them (llround(ts * 1000) nanoseconds); the value must be a whole number
// of nanoseconds, the tick podsim computes once per slice.
long long ticks(const json& v) {
  double us = v.get<double>();
  long long n = std::llround(us * 1000.0);
  EXPECT_NEAR(us * 1000.0, static_cast<double>(n), 1e-3) << us;
  return n;
}

struct Checked {
  std::map<std::pair<int, int>, std::vector<Interval>> threads;
  std::set<std::string> names;
  int flows = 0, slices = 0, with_bytes = 0;
  long long end = 0;
  std::map<int, int> counters;  // "C" events per pid
};

// Every thread's slices nest exactly: sorted by (begin, longer first), each slice lies inside or wholly
// after the previous ones still open; no two share begin, end and name.
void check_nesting(const std::pair<int, int>& thread, std::vector<Interval> v) {
  std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) {
    return std::tie(a.begin, b.end, a.name) < std::tie(b.begin, a.end, b.name);
  });
  std::vector<Interval> open;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0)
      EXPECT_FALSE(v[i].begin == v[i - 1].begin && v[i].end == v[i - 1].end && v[i].name == v[i - 1].name)
          << "duplicate slice " << v[i].name << " on pid " << thread.first << " tid " << thread.second;
    while (!open.empty() && open.back().end <= v[i].begin) open.pop_back();
    if (!open.empty())
      ASSERT_LE(v[i].end, open.back().end)
          << v[i].name << " [" << v[i].begin << ", " << v[i].end << ") partly overlaps " << open.back().name
          << " [" << open.back().begin << ", " << open.back().end << ") on pid " << thread.first << " tid "
          << thread.second;
    open.push_back(v[i]);
  }
}

bool encloses(const std::vector<Interval>& thread, long long ts) {
  return std::any_of(thread.begin(), thread.end(),
                     [&](const Interval& s) { return s.begin <= ts && ts < s.end; });
}

void check_flows(const json& events, const Checked& c, int& pairs) {
  std::map<long long, std::vector<const json*>> by_id;
  for (const auto& e : events)
    if (e["ph"] == "s" || e["ph"] == "f") by_id[e["id"].get<long long>()].push_back(&e);
  for (const auto& [id, ends] : by_id) {
    ASSERT_EQ(ends.size(), 2u) << "flow " << id;
    const json& s = (*ends[0])["ph"] == "s" ? *ends[0] : *ends[1];
    const json& f = (*ends[0])["ph"] == "f" ? *ends[0] : *ends[1];
    ASSERT_EQ(s["ph"], "s");
    ASSERT_EQ(f["ph"], "f");
    EXPECT_EQ(s["name"], f["name"]);
    EXPECT_EQ(s["cat"], f["cat"]);
    EXPECT_EQ(f["bp"], "e");
    for (const json* e : {&s, &f}) {
      auto it = c.threads.find({(*e)["pid"].get<int>(), (*e)["tid"].get<int>()});
      ASSERT_NE(it, c.threads.end()) << "flow " << id << " on a thread without slices";
      EXPECT_TRUE(encloses(it->second, ticks((*e)["ts"]))) << "flow " << id << " binds to no slice";
    }
    EXPECT_LE(ticks(s["ts"]), ticks(f["ts"])) << "flow " << id << " goes back in time";
    ++pairs;
  }
}

Checked check_trace(const std::string& text) {
  Checked c;
  json t = json::parse(text);  // throws on invalid JSON
  const json& events = t.at("traceEvents");
  std::set<std::pair<int, int>> named;
  for (const auto& e : events) {
    std::string ph = e.at("ph");
    EXPECT_TRUE(ph == "X" || ph == "M" || ph == "s" || ph == "f" || ph == "C") << e.dump();
    EXPECT_TRUE(e.at("pid").is_number_integer()) << e.dump();
    if (ph == "C") {  // a counter: a name, a time and only numbers in args (each arg is one series)
      EXPECT_TRUE(e.at("name").is_string() && e.at("ts").is_number() && e.at("args").is_object()) << e.dump();
      for (const auto& [k, v] : e["args"].items()) EXPECT_TRUE(v.is_number()) << k << " in " << e.dump();
      c.counters[e["pid"].get<int>()] += 1;
      continue;
    }
    if (ph == "M" && e["name"] == "thread_name") named.insert({e["pid"].get<int>(), e.at("tid").get<int>()});
    if (ph != "X") continue;
    EXPECT_TRUE(e.at("tid").is_number_integer() && e.at("name").is_string()) << e.dump();
    EXPECT_TRUE(e.at("ts").is_number() && e.at("dur").is_number()) << e.dump();
    long long b = ticks(e["ts"]), d = ticks(e["dur"]);
    EXPECT_GE(b, 0);
    EXPECT_GT(d, 0) << e.dump();
    c.threads[{e["pid"].get<int>(), e["tid"].get<int>()}].push_back({b, b + d, e["name"].get<std::string>()});
    c.names.insert(e["name"].get<std::string>());
    c.end = std::max(c.end, b + d);
    ++c.slices;
    c.with_bytes += e.contains("args") && e["args"].contains("bytes");
  }
  for (const auto& [thread, v] : c.threads) {
    EXPECT_TRUE(named.count(thread)) << "thread without a name: pid " << thread.first << " tid "
                                     << thread.second;
    check_nesting(thread, v);
  }
  check_flows(events, c, c.flows);
  return c;
}

report::RunResult run(const std::string& topo, const std::string& work, std::vector<std::string> sets = {}) {
  driver::RunRequest req{source_path("topologies/" + topo), source_path("workloads/" + work),
                         std::move(sets)};
  req.trace = true;  // as `podsim run --trace` asks: with the link utilization tracks
  req.links = true;  // links.csv's totals, for the tracks' closed form
  auto r = driver::simulate(req);
  EXPECT_TRUE(r.ok()) << topo << " " << work << ": " << r.status_detail;
  return r;
}

void expect_valid(const report::RunResult& r, bool pipelined) {
  Checked c = check_trace(report::chrome_trace(r));
  EXPECT_GT(c.slices, 0);
  EXPECT_NEAR(static_cast<double>(c.end), r.step_time() * 1e9, 1.0);  // the trace covers the step
  EXPECT_GT(c.with_bytes, 0) << "communication slices carry their bytes";
  EXPECT_LT(c.names.size(), 40u) << "details belong in args, not in names";
  if (pipelined) EXPECT_GT(c.flows, 0) << "pipeline sends have flow arrows";
  // A memory counter track on every lane whose memory the workload reports (start and end of the step).
  for (size_t s = 0; s < r.plan.memory.size() && s < static_cast<size_t>(r.plan.graph.stages); ++s)
    EXPECT_EQ(c.counters[static_cast<int>(s)], 2) << "lane " << s;
}

TEST(Trace, Gpt3OnTheA100SuperpodNestsPerThreadAndLinksSendsToReceives) {
  auto r = run("dgx-a100-superpod.yaml", "gpt3-175b.yaml");
  expect_valid(r, true);
  // A stage's sends and the sends it receives from its peer are on different threads.
  json t = json::parse(report::chrome_trace(r));
  std::set<std::string> threads;
  for (const auto& e : t["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == 1) threads.insert(e["args"]["name"]);
  EXPECT_TRUE(threads.count("send to stage 2")) << json(threads).dump();
  EXPECT_TRUE(threads.count("receive from stage 0")) << json(threads).dump();
}

TEST(Trace, EveryWorkloadKindGivesAValidTrace) {
  expect_valid(run("tpu-v4-pod.yaml", "gpt3-xl.yaml", {"workload.training.precision=bf16"}), false);
  expect_valid(run("cerebras-cs2-cluster.yaml", "gpt3-xl.yaml"), false);
  expect_valid(
      run("tpu-v3-pod.yaml", "gshard-moe.yaml",
          {"topology.dims=[8,8]", "workload.model.experts=128", "workload.training.batch_tokens=524288"}),
      false);
  expect_valid(run("gpu-ps-4node.yaml", "ctr-sparse-ps.yaml"), false);
  expect_valid(run("cpu-mpi-cluster.yaml", "ctr-sparse-ps.yaml"), false);
}

TEST(Trace, ParameterGathersAreNotCalledGradientReductions) {
  auto r = run(
      "dgx-a100-superpod.yaml", "gpt3-xl.yaml",
      {"topology.nodes=2", "workload.parallel.zero=3", "workload.parallel.pp=1", "workload.parallel.tp=1"});
  Checked c = check_trace(report::chrome_trace(r));
  EXPECT_TRUE(c.names.count("parameter gather"));
  EXPECT_TRUE(c.names.count("gradient reduction"));
}

TEST(Trace, SlicesCarryLinkClassesAndTransferDetails) {
  auto r = run("dgx-a100-superpod.yaml", "gpt3-175b.yaml");
  json t = json::parse(report::chrome_trace(r));
  bool send = false, ib = false, nvlink = false;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const json& a = e["args"];
    if (e["name"] == "send activations") {
      send = true;
      EXPECT_TRUE(a.contains("microbatch") && a.contains("peer") && a.contains("bytes")) << e.dump();
      EXPECT_GT(a["bytes"].get<double>(), 0);
    }
    std::string cls = a.value("link_class", "");
    ib |= cls.find("infiniband") != std::string::npos;
    nvlink |= cls.find("nvlink") != std::string::npos;
  }
  EXPECT_TRUE(send && ib && nvlink);
}

// The link tracks: one series per link class of the topology, a percentage of the class's capacity, idle at
// the step's end; integrated over the step and times the capacity, each is the bytes --links counts.
void expect_link_counters(const report::RunResult& r) {
  ASSERT_TRUE(r.links && r.plan_class_bytes);
  json t = json::parse(report::chrome_trace(r));
  const int pid = r.plan.graph.stages;
  std::vector<const json*> points;
  for (const auto& e : t["traceEvents"])
    if (e["ph"] == "C" && e["pid"] == pid) points.push_back(&e);
  ASSERT_GE(points.size(), 2u);
  for (const auto& cls : r.links->classes) {
    double integral = 0, peak = 0;  // percent x microseconds
    for (size_t i = 0; i < points.size(); ++i) {
      const json& a = (*points[i])["args"];
      ASSERT_TRUE(a.contains(cls.cls)) << cls.cls;
      double v = a[cls.cls].get<double>();
      EXPECT_GE(v, 0) << cls.cls;
      peak = std::max(peak, v);
      if (i + 1 < points.size())
        integral += v * ((*points[i + 1])["ts"].get<double>() - (*points[i])["ts"].get<double>());
    }
    EXPECT_EQ((*points.back())["args"][cls.cls].get<double>(), 0) << cls.cls << " busy after the step";
    double bytes = integral / 100 * 1e-6 * cls.capacity;
    EXPECT_NEAR(bytes, cls.bytes, 1e-6 * cls.bytes + 1) << cls.cls;
    EXPECT_LE(peak, 100.0 + 1e-9) << cls.cls;
    if (cls.bytes > 0) EXPECT_GT(peak, 0) << cls.cls;
  }
  EXPECT_LE((*points.back())["ts"].get<double>() * 1e3, r.step_time() * 1e9 + 1);
}

TEST(Trace, LinkUtilizationTracksIntegrateToTheBytesPerLinkClass) {
  auto r = run("dgx-a100-superpod.yaml", "gpt3-175b.yaml");
  expect_link_counters(r);
  ASSERT_TRUE(r.links);
  int carrying = 0;  // both NVLink (tensor parallel) and InfiniBand (pipeline, data parallel) carry bytes
  for (const auto& c : r.links->classes) carrying += c.bytes > 0;
  EXPECT_GE(carrying, 2);
  expect_link_counters(run("tpu-v4-pod.yaml", "gpt3-xl.yaml", {"workload.training.precision=bf16"}));
}

TEST(Trace, NoLinkTracksWithoutTheirData) {
  driver::RunRequest req{source_path("topologies/dgx-a100-superpod.yaml"),
                         source_path("workloads/gpt3-xl.yaml"),
                         {"topology.nodes=2"}};
  auto r = driver::simulate(req);  // not traced: nothing routed per plan
  EXPECT_FALSE(r.plan_class_bytes);
  json t = json::parse(report::chrome_trace(r));
  for (const auto& e : t["traceEvents"]) EXPECT_NE(e["pid"], r.plan.graph.stages) << e.dump();
}

}  // namespace
}  // namespace podsim
