// Study files, filter expressions, results tables and the sweep runner (with a stand-in for the simulator).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "podsim/core/error.hpp"
#include "podsim/study/expression.hpp"
#include "podsim/study/results.hpp"
#include "podsim/study/study.hpp"
#include "podsim/study/sweep.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::study;
namespace fs = std::filesystem;

namespace {

std::string temp_dir(const std::string& name) {
  auto dir = fs::temp_directory_path() / ("podsim-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::string write(const std::string& dir, const std::string& name, const std::string& text) {
  std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

const char* kStudy = R"(name: test study
topology: t.yaml
workload: w.yaml
set: {workload.parallel.virtual_stages: 2}
axes:
  - zip: {topology.nodes: [1, 2, 4], workload.training.global_batch: [8, 16, 32]}
  - grid: {workload.parallel.pp: [2, 4]}
filters:
  - workload.parallel.pp <= topology.nodes * 2
)";

// Stand-in for the simulator: a row whose step time is a function of the point.
ResultRow fake_runner(const Study& s, const Point& p) {
  ResultRow row = unrun_row(s, p, "ok", "");
  auto cols = results_columns(s);
  for (size_t i = 0; i < cols.size(); ++i)
    if (cols[i] == "step_time_s") row.cells[i] = std::to_string(1.0 + p.index * 0.5);
  return row;
}

}  // namespace

TEST(Expression, ArithmeticComparisonsAndLogic) {
  std::map<std::string, std::string> v = {{"a.b", "4"}, {"c", "8"}, {"name", "dgx"}};
  EXPECT_TRUE(Expression::parse("a.b * 2 == c").evaluate(v));
  EXPECT_TRUE(Expression::parse("a.b < c and not (c % 3 == 0)").evaluate(v));
  EXPECT_TRUE(Expression::parse("name == 'dgx' or c > 100").evaluate(v));
  EXPECT_FALSE(Expression::parse("-a.b + 1 > 0").evaluate(v));
  EXPECT_THROW(Expression::parse("a.b *"), std::invalid_argument);
  EXPECT_THROW(Expression::parse("(a.b"), std::invalid_argument);
  EXPECT_THROW(Expression::parse("missing > 1").evaluate(v), std::invalid_argument);
}

TEST(Study, ExpandsZipTimesGridAndAppliesFilters) {
  auto dir = temp_dir("expand");
  auto s = load_study(write(dir, "s.yaml", kStudy));
  ASSERT_EQ(s.points.size(), 6u);  // 3 zipped x 2 crossed
  EXPECT_EQ(s.axis_keys, (std::vector<std::string>{"topology.nodes", "workload.training.global_batch",
                                                   "workload.parallel.pp"}));
  EXPECT_EQ(s.points[1].values.at("topology.nodes"), "1");
  EXPECT_EQ(s.points[1].values.at("workload.parallel.pp"), "4");
  EXPECT_EQ(s.points[1].skipped, "filter: workload.parallel.pp <= topology.nodes * 2");  // 4 > 1 * 2
  EXPECT_TRUE(s.points[0].skipped.empty());
  EXPECT_EQ(s.points[0].sets.front().key, "workload.parallel.virtual_stages");
  EXPECT_EQ(s.points[0].topology_file, fs::path(dir + "/t.yaml").lexically_normal().string());
  // Ids are stable and distinct.
  auto again = load_study(dir + "/s.yaml");
  std::set<std::string> ids;
  for (size_t i = 0; i < s.points.size(); ++i) {
    EXPECT_EQ(s.points[i].id, again.points[i].id);
    ids.insert(s.points[i].id);
  }
  EXPECT_EQ(ids.size(), s.points.size());
}

TEST(Study, RangesAndFileAxes) {
  auto dir = temp_dir("range");
  auto s = load_study(write(dir, "s.yaml", R"(name: r
workload: w.yaml
axes:
  - grid: {topology: [a.yaml, b.yaml]}
  - range: {key: topology.nodes, from: 8, to: 64, times: 2}
)"));
  ASSERT_EQ(s.points.size(), 8u);
  EXPECT_EQ(s.axis_keys.front(), "topology_file");
  EXPECT_EQ(s.points[3].values.at("topology.nodes"), "64");
  EXPECT_NE(s.points[4].topology_file.find("b.yaml"), std::string::npos);
  auto step = load_study(write(dir, "t.yaml",
                               "name: t\ntopology: a.yaml\nworkload: w.yaml\naxes:\n  - range: {key: "
                               "workload.training.global_batch, from: 10, to: 30, step: 10}\n"));
  EXPECT_EQ(step.points.size(), 3u);
}

TEST(Study, NamedCases) {
  auto dir = temp_dir("cases");
  auto s = load_study(write(dir, "s.yaml", R"(name: c
topology: a.yaml
workload: w.yaml
axes:
  - cases:
      - {name: base}
      - {name: deep, set: {workload.parallel.pp: 16, topology: b.yaml}}
  - grid: {topology.nodes: [8, 16]}
)"));
  ASSERT_EQ(s.points.size(), 4u);
  EXPECT_EQ(s.axis_keys, (std::vector<std::string>{"case", "topology.nodes"}));
  EXPECT_EQ(s.points[2].values.at("case"), "deep");
  EXPECT_NE(s.points[2].topology_file.find("b.yaml"), std::string::npos);
  EXPECT_EQ(s.points[2].sets.front().key, "workload.parallel.pp");
  EXPECT_NE(s.points[0].topology_file.find("a.yaml"), std::string::npos);
}

TEST(Study, BadStudiesNameTheProblem) {
  auto dir = temp_dir("bad");
  auto message = [&](const std::string& text) {
    try {
      load_study(write(dir, "bad.yaml", text));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  std::string head = "name: b\ntopology: t.yaml\nworkload: w.yaml\n";
  EXPECT_NE(message(head + "axes:\n  - zip: {topology.nodes: [1, 2], workload.training.global_batch: [8]}\n")
                .find("same length"),
            std::string::npos);
  EXPECT_NE(message(head + "axes:\n  - cube: {topology.nodes: [1]}\n").find("unknown axis kind"),
            std::string::npos);
  EXPECT_NE(message(head + "axes:\n  - grid: {nodes: [1]}\n").find("axis keys are"), std::string::npos);
  EXPECT_NE(
      message(head + "axes:\n  - range: {key: topology.nodes, from: 8, to: 4, times: 2}\n").find("empty"),
      std::string::npos);
  EXPECT_NE(
      message(head + "axes:\n  - range: {key: topology.nodes, from: 1, to: 4}\n").find("exactly one of"),
      std::string::npos);
  EXPECT_NE(message(head + "filters: ['topology.nodes >']\n").find("does not parse"), std::string::npos);
  EXPECT_NE(
      message(head + "axes:\n  - grid: {topology.nodes: [1]}\nfilters: ['nodez > 1']\n").find("unknown name"),
      std::string::npos);
  EXPECT_NE(message(head + "axis: []\n").find("unknown key 'axis'"), std::string::npos);
  EXPECT_NE(message("name: x\nworkload: w.yaml\n").find("no topology"), std::string::npos);
  EXPECT_NE(message(head + "axes:\n  - range: {key: topology.nodes, from: 1, to: 1000000, step: 1}\n")
                .find("more than"),
            std::string::npos);
}

TEST(Results, TruncatedLastLineIsIgnoredAndHeaderIsChecked) {
  auto dir = temp_dir("results");
  auto s = load_study(write(dir, "s.yaml", kStudy));
  auto columns = results_columns(s);
  std::string text = header_line(columns) + row_line(unrun_row(s, s.points[0], "ok", "")) + "1,abc,1,8";
  auto path = write(dir, "r.csv", text);
  auto table = read_results(path, columns);
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(table.rows[0].id, s.points[0].id);
  EXPECT_THROW(read_results(path, {"point", "other"}), InputError);
}

TEST(Sweep, ResultsAreSortedAndIdenticalWhateverTheWorkers) {
  auto dir = temp_dir("sweep");
  auto s = load_study(write(dir, "s.yaml", kStudy));
  auto run = [&](int jobs, const std::string& out) {
    SweepOptions o;
    o.out = out;
    o.jobs = jobs;
    o.progress = false;
    auto outcome = run_sweep(s, o, [&](const Point& p) { return fake_runner(s, p); });
    EXPECT_FALSE(outcome.interrupted);
    EXPECT_EQ(outcome.ran + outcome.skipped, 6);
    return read(outcome.results_file);
  };
  std::string one = run(1, dir + "/one"), three = run(3, dir + "/three");
  EXPECT_EQ(one, three);
  EXPECT_FALSE(fs::exists(dir + "/one/results.partial.csv"));
  auto table = read_results(dir + "/one/results.csv");
  for (size_t i = 0; i < table.rows.size(); ++i) EXPECT_EQ(table.rows[i].point, static_cast<int>(i));
  // Running again into the same directory without --resume is refused; with it, nothing is redone.
  SweepOptions o;
  o.out = dir + "/one";
  o.progress = false;
  EXPECT_THROW(run_sweep(s, o, [&](const Point& p) { return fake_runner(s, p); }), InputError);
  o.resume = true;
  auto again = run_sweep(s, o, [&](const Point& p) { return fake_runner(s, p); });
  EXPECT_EQ(again.reused, 6);
  EXPECT_EQ(again.ran, 0);
  EXPECT_EQ(read(again.results_file), one);
}

TEST(Sweep, ResumeFinishesAPartialSweepAndShardsSplitThePoints) {
  auto dir = temp_dir("resume");
  auto s = load_study(write(dir, "s.yaml", kStudy));
  auto columns = results_columns(s);
  // A partial file as an interrupted sweep leaves it: two finished points, the second out of order, and
  // a half-written line.
  fs::create_directories(dir + "/out");
  write(dir + "/out", "results.partial.csv",
        header_line(columns) + row_line(fake_runner(s, s.points[3])) + row_line(fake_runner(s, s.points[0])) +
            "5,dead");
  SweepOptions o;
  o.out = dir + "/out";
  o.resume = true;
  o.progress = false;
  int calls = 0;
  auto outcome = run_sweep(s, o, [&](const Point& p) {
    calls++;
    return fake_runner(s, p);
  });
  EXPECT_EQ(outcome.reused, 2);
  SweepOptions full;
  full.out = dir + "/full";
  full.progress = false;
  EXPECT_EQ(read(outcome.results_file),
            read(run_sweep(s, full, [&](const Point& p) { return fake_runner(s, p); }).results_file));
  // Shards: disjoint, together everything.
  int total = 0;
  for (int i = 0; i < 3; ++i) {
    SweepOptions sh;
    sh.out = dir + "/shards";
    sh.shard = i;
    sh.shards = 3;
    sh.progress = false;
    auto r = run_sweep(s, sh, [&](const Point& p) { return fake_runner(s, p); });
    EXPECT_NE(r.results_file.find(fmt::format("shard-{}-of-3", i)), std::string::npos);
    total += r.total;
  }
  EXPECT_EQ(total, 6);
}
