// The sweep runner (with a stand-in for the simulator): ordering, resume, shards, and what happens when
// workers crash, are interrupted, or two sweeps share a directory; and the statuses of one sweep point.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <csignal>
#include <filesystem>

#include "podsim/core/error.hpp"
#include "podsim/driver/sweep_point.hpp"
#include "podsim/study/output_lock.hpp"
#include "podsim/study/results.hpp"
#include "podsim/study/study.hpp"
#include "podsim/study/sweep.hpp"
#include "study_test_helpers.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::study;
using namespace podsim::study::test_support;

namespace {
// A results row's cell by column name (an empty cell, and a failed expectation, for a column not there).
auto cell_of(const std::vector<std::string>& columns) {
  return [columns](const ResultRow& r, const std::string& c) {
    auto it = std::find(columns.begin(), columns.end(), c);
    EXPECT_NE(it, columns.end()) << c;
    return it == columns.end() ? std::string() : r.cells[static_cast<size_t>(it - columns.begin())];
  };
}

// The head of a study file on presets of the project: its name, topology and workload lines.
std::string study_head(const std::string& name, const std::string& topology, const std::string& workload) {
  return "name: " + name + "\ntopology: " + podsim::testing::source_path("topologies/" + topology + ".yaml") +
         "\nworkload: " + podsim::testing::source_path("workloads/" + workload + ".yaml") + "\n";
}
}  // namespace

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
  EXPECT_EQ(again.reused, 5);  // the filtered point's row is made again from the filters
  EXPECT_EQ(again.skipped, 1);
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

TEST(Sweep, BadOptionsAndASecondSweepIntoTheSameDirectoryAreRefused) {
  auto dir = temp_dir("lock");
  auto s = load_study(write(dir, "s.yaml", kStudy));
  auto runner = [&](const Point& p) { return fake_runner(s, p); };
  SweepOptions o = quiet_options(dir + "/out");
  o.jobs = 0;
  EXPECT_THROW(run_sweep(s, o, runner), InputError);
  o.jobs = 1;
  fs::create_directories(dir + "/out");
  {
    OutputLock other(dir + "/out/results.lock", "elsewhere");  // as a sweep running in another process
    std::string m = message_of([&] { run_sweep(s, o, runner); });
    EXPECT_NE(m.find("another podsim sweep"), std::string::npos) << m;
    o.resume = true;
    EXPECT_THROW(run_sweep(s, o, runner), InputError);
    EXPECT_FALSE(fs::exists(dir + "/out/results.partial.csv"));  // the refused sweep touched nothing
  }
  EXPECT_FALSE(fs::exists(dir + "/out/results.lock"));  // removed by its holder
  auto outcome = run_sweep(s, o, runner);
  EXPECT_EQ(read(outcome.results_file), reference_results(s, dir + "/ref"));
  EXPECT_FALSE(fs::exists(dir + "/out/results.lock"));
}

TEST(Sweep, ACrashedPointIsFailedAndResumeRunsItAgain) {
  auto dir = temp_dir("crash");
  auto s = load_study(write(dir, "s.yaml", kStudy));
  auto outcome = run_sweep(s, quiet_options(dir + "/out"), [&](const Point& p) {
    if (p.index == 2) std::raise(SIGSEGV);  // in the worker process only
    if (p.index == 3) throw InvariantViolation("mfu 1.7 > 1");
    return fake_runner(s, p);
  });
  EXPECT_FALSE(outcome.interrupted);
  EXPECT_EQ(outcome.failed, 2);
  std::string text = read(outcome.results_file);
  // Signal 11 here, 6 under AddressSanitizer (which turns a SEGV into an abort).
  EXPECT_NE(text.find(",the simulation process crashed with signal "), std::string::npos) << text;
  EXPECT_NE(text.find(",the simulation threw: mfu 1.7 > 1"), std::string::npos) << text;
  auto columns = results_columns(s);
  auto status = std::find(columns.begin(), columns.end(), "status") - columns.begin();
  EXPECT_EQ(read_results(outcome.results_file).rows[2].cells[status], "failed");
  std::vector<std::string> notes;
  SweepOptions again = quiet_options(dir + "/out", true);
  again.note = [&](const std::string& n) { notes.push_back(n); };
  auto resumed = run_sweep(s, again, [&](const Point& p) { return fake_runner(s, p); });
  EXPECT_EQ(resumed.failed, 0);
  EXPECT_EQ(resumed.ran, 2);
  EXPECT_EQ(read(resumed.results_file), reference_results(s, dir + "/ref"));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("2 failed points"), std::string::npos);
}

TEST(Sweep, APointStoppedBySigintIsNotRecordedAndResumeRunsIt) {
  // What Ctrl-C or Slurm do: the signal reaches the workers of the process group. It used to be recorded
  // as "error ... died with signal 2", and --resume never ran the point again.
  auto dir = temp_dir("sigint");
  auto s = load_study(write(dir, "s.yaml", kStudy));
  auto outcome = run_sweep(s, quiet_options(dir + "/out"), [&](const Point& p) {
    if (p.index == 2) std::raise(SIGINT);
    return fake_runner(s, p);
  });
  EXPECT_TRUE(outcome.interrupted);
  EXPECT_EQ(outcome.signal, SIGINT);
  EXPECT_EQ(outcome.failed, 0);
  EXPECT_FALSE(fs::exists(dir + "/out/results.csv"));
  auto partial = read_results(dir + "/out/results.partial.csv");
  for (const auto& r : partial.rows) EXPECT_NE(r.point, 2);
  auto resumed =
      run_sweep(s, quiet_options(dir + "/out", true), [&](const Point& p) { return fake_runner(s, p); });
  EXPECT_EQ(read(resumed.results_file), reference_results(s, dir + "/ref"));
}

TEST(Sweep, ResumeToleratesDuplicatesATornLineAndALeftoverResultsFile) {
  // A kill in the middle of a resume used to leave every row twice (77 rows for 48 points).
  auto dir = temp_dir("dups");
  auto s = load_study(write(dir, "s.yaml", kStudy));
  std::string ref = reference_results(s, dir + "/ref");
  auto columns = results_columns(s);
  fs::create_directories(dir + "/out");
  fs::copy_file(dir + "/ref/results.csv", dir + "/out/results.csv");
  ResultRow stale = fake_runner(s, s.points[4]);
  stale.cells[std::find(columns.begin(), columns.end(), "step_time_s") - columns.begin()] = "99";
  std::string rows = row_line(stale) + row_line(fake_runner(s, s.points[0]));
  write(dir + "/out", "results.partial.csv",
        header_line(columns) + rows + rows + row_line(fake_runner(s, s.points[4])) + "3,dead,1");
  int calls = 0;
  auto outcome = run_sweep(s, quiet_options(dir + "/out", true), [&](const Point& p) {
    calls++;
    return fake_runner(s, p);
  });
  EXPECT_EQ(calls, 0);  // everything was on disk; the last row of point 4 wins
  EXPECT_EQ(read(outcome.results_file), ref);
}

TEST(Sweep, ResumingAnEditedStudyDropsPointsNoLongerInIt) {
  auto dir = temp_dir("edited");
  auto s = load_study(write(dir, "s.yaml", kStudy));
  reference_results(s, dir + "/out");
  std::string edited_text = kStudy;
  edited_text.replace(edited_text.find("[2, 4]"), 6, "[4, 8]");  // pp 2 goes, pp 8 comes
  auto edited = load_study(write(dir, "e.yaml", edited_text));
  std::vector<std::string> notes;
  SweepOptions o = quiet_options(dir + "/out", true);
  o.note = [&](const std::string& n) { notes.push_back(n); };
  int calls = 0;
  auto outcome = run_sweep(edited, o, [&](const Point& p) {
    calls++;
    return fake_runner(edited, p);
  });
  EXPECT_EQ(outcome.dropped, 3);  // the three pp=2 points
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].find("dropped 3 rows"), std::string::npos) << notes[0];
  EXPECT_EQ(read(outcome.results_file), reference_results(edited, dir + "/ref"));
  EXPECT_LE(calls, 3);  // only pp=8 points run (those the filter keeps); pp=4 rows are reused
}

TEST(SweepPoint, BrokenInvariantIsFailedBadInputInvalid) {
  auto dir = temp_dir("point");
  auto s = load_study(write(dir, "s.yaml", kStudy));
  auto columns = results_columns(s);
  auto cell = cell_of(columns);
  auto row = driver::run_point(s, s.points[0], [](const driver::RunRequest&) -> report::RunResult {
    throw InvariantViolation("mfu 1.2 exceeds 1");
  });
  EXPECT_EQ(cell(row, "status"), "failed");
  EXPECT_NE(cell(row, "detail").find("mfu 1.2 exceeds 1"), std::string::npos);
  row = driver::run_point(s, s.points[0], [](const driver::RunRequest&) -> report::RunResult {
    throw InputError("w.yaml:3:1: parallel.tp: 3 does not divide 16 heads");
  });
  EXPECT_EQ(cell(row, "status"), "invalid");
  row = driver::run_point(s, s.points[0], [](const driver::RunRequest&) -> report::RunResult {
    throw InfeasibleConfig("out_of_memory", "needs 90 GiB of 80");
  });
  EXPECT_EQ(cell(row, "status"), "out_of_memory");
}

// A study that names a reliability profile fills the goodput columns of every ok point from the run.
TEST(SweepPoint, GoodputColumnsComeFromTheRunAndTheProfile) {
  auto dir = temp_dir("goodput-point");
  std::string text = study_head("g", "dgx-h100-superpod", "llama3-8b") + "goodput: " +
                     podsim::testing::source_path("calibration/reliability/h100-llama3-meta.yaml") +
                     "\nset: {workload.model.layers: 4, workload.training.global_batch: 8}\n"
                     "axes:\n  - zip: {topology.nodes: [1, 2], workload.parallel.dp: [8, 16],"
                     " workload.training.global_batch: [8, 16]}\n";
  auto s = load_study(write(dir, "s.yaml", text));
  auto columns = results_columns(s);
  ASSERT_NE(std::find(columns.begin(), columns.end(), "goodput"), columns.end());
  auto cell = cell_of(columns);
  auto small = driver::run_point(s, s.points[0]), large = driver::run_point(s, s.points[1]);
  ASSERT_EQ(cell(small, "status"), "ok") << cell(small, "detail");
  ASSERT_EQ(cell(large, "status"), "ok") << cell(large, "detail");
  double g1 = std::stod(cell(small, "goodput")), g2 = std::stod(cell(large, "goodput"));
  EXPECT_GT(g1, 0);
  EXPECT_LE(g1, 1);
  EXPECT_LE(g2, g1);
  // Twice the GPUs, hosts and NICs, and at least twice the scale-out links (one node has none to spare).
  EXPECT_GE(std::stod(cell(large, "job_failures_per_day")),
            2 * std::stod(cell(small, "job_failures_per_day")));
  // Without the key the columns are not there.
  auto plain = load_study(write(dir, "p.yaml", "name: p\ntopology: t.yaml\nworkload: w.yaml\n"));
  auto plain_columns = results_columns(plain);
  EXPECT_EQ(std::find(plain_columns.begin(), plain_columns.end(), "goodput"), plain_columns.end());
}

// An axis that leaves a key of the workload inconsistent (hidden over a file with an explicit ffn_hidden)
// keeps the run's warning in the point's detail cell; a point without one has none.
TEST(SweepPoint, WorkloadWarningsAreInTheDetailCell) {
  auto dir = temp_dir("warning-point");
  std::string text =
      study_head("w", "dgx-h100-superpod", "gpt3-175b") +
      "set: {topology.nodes: 1, workload.model.layers: 2, workload.parallel.pp: 1, workload.parallel.tp: 8,"
      " workload.parallel.dp: 1, workload.training.global_batch: 8, workload.parallel.virtual_stages: 1,"
      " workload.parallel.schedule: 1f1b}\n"
      "axes:\n  - grid: {workload.model.hidden: [12288, 6144]}\n";  // the file's ffn_hidden is 4 x 12288
  auto s = load_study(write(dir, "s.yaml", text));
  auto columns = results_columns(s);
  auto cell = cell_of(columns);
  ASSERT_EQ(s.points.size(), 2u);
  std::map<std::string, std::string> detail;
  for (const auto& p : s.points) {
    auto row = driver::run_point(s, p);
    ASSERT_EQ(cell(row, "status"), "ok") << cell(row, "detail");
    detail[p.values.at("workload.model.hidden")] = cell(row, "detail");
  }
  EXPECT_EQ(detail["12288"], "");
  EXPECT_EQ(detail["6144"].find("warning: "), 0u) << detail["6144"];
  EXPECT_NE(detail["6144"].find("model.ffn_hidden: 49152 is kept"), std::string::npos) << detail["6144"];
}

// Every point's memory by component (the fullest stage's), also out of memory: the parts add up to its
// memory_per_device_GiB.
TEST(SweepPoint, MemoryComponentsAddUpToThePointsMemory) {
  auto dir = temp_dir("memory-point");
  std::string text = study_head("m", "dgx-h100-superpod", "llama3-8b") +
                     "set: {topology.nodes: 1, workload.training.global_batch: 8}\n"
                     "axes:\n  - grid: {workload.model.layers: [4, 2000]}\n";
  auto s = load_study(write(dir, "s.yaml", text));
  auto columns = results_columns(s);
  auto cell = cell_of(columns);
  auto fits = driver::run_point(s, s.points[0]), oom = driver::run_point(s, s.points[1]);
  ASSERT_EQ(cell(fits, "status"), "ok") << cell(fits, "detail");
  ASSERT_EQ(cell(oom, "status"), "out_of_memory") << cell(oom, "detail");
  for (const auto* r : {&fits, &oom}) {
    double sum = 0;
    for (const auto& c : memory_columns()) sum += std::stod(cell(*r, c));
    double total = std::stod(cell(*r, "memory_per_device_GiB"));
    EXPECT_NEAR(sum, total, 0.002 * total + 1e-3) << cell(*r, "status");
    EXPECT_GT(std::stod(cell(*r, "memory_weights_GiB")), 0);
  }
  EXPECT_GT(std::stod(cell(oom, "memory_weights_GiB")), std::stod(cell(fits, "memory_weights_GiB")));
}
