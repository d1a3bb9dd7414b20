// Study files, filter expressions, results tables and the sweep runner (with a stand-in for the simulator).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>

#include "podsim/cli/sweep_point.hpp"
#include "podsim/core/error.hpp"
#include "podsim/study/expression.hpp"
#include "podsim/study/output_lock.hpp"
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
    if (cols[i] == "step_time_s")  // from the point's values, not its index: reused rows must stay right
      row.cells[i] = std::to_string(std::stoi(p.values.at("topology.nodes")) * 0.5 +
                                    std::stoi(p.values.at("workload.parallel.pp")) * 0.125);
  return row;
}

SweepOptions quiet_options(const std::string& out, bool resume = false) {
  SweepOptions o;
  o.out = out;
  o.resume = resume;
  o.progress = false;
  return o;
}

// The results file of an uninterrupted sweep of `s` with the stand-in simulator.
std::string reference_results(const Study& s, const std::string& out) {
  auto outcome = run_sweep(s, quiet_options(out), [&](const Point& p) { return fake_runner(s, p); });
  return read(outcome.results_file);
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
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

TEST(Expression, DeepNestingIsAnErrorNotACrash) {
  // 10,000 nested parentheses used to overflow the stack of the recursive parser (a segfault).
  std::string deep = std::string(10000, '(') + "a" + std::string(10000, ')');
  EXPECT_NE(message_of([&] { Expression::parse(deep); }).find("nested more than 100 levels"),
            std::string::npos);
  std::string nots;
  for (int i = 0; i < 10000; ++i) nots += "not ";
  EXPECT_THROW(Expression::parse(nots + "a"), std::invalid_argument);
  EXPECT_THROW(Expression::parse(std::string(10000, '-') + "1"), std::invalid_argument);
  std::string chain = "a";
  for (int i = 0; i < 10000; ++i) chain += " + a";
  EXPECT_THROW(Expression::parse(chain), std::invalid_argument);
  // Real filters are a few levels deep.
  std::map<std::string, std::string> v = {{"a", "1"}};
  EXPECT_TRUE(Expression::parse(std::string(50, '(') + "a == 1" + std::string(50, ')')).evaluate(v));
}

TEST(Study, RepeatedPointsFilesAndDeepFiltersAreInputErrors) {
  auto dir = temp_dir("repeat");
  std::string head = "name: b\ntopology: t.yaml\nworkload: w.yaml\n";
  auto message = [&](const std::string& text) {
    return message_of([&] { load_study(write(dir, "bad.yaml", text)); });
  };
  // A repeated value ran a point twice and made `podsim merge` fail after sharding.
  std::string m = message(head + "axes:\n  - grid: {topology.nodes: [1, 2, 1]}\n");
  EXPECT_NE(m.find("bad.yaml:5:"), std::string::npos) << m;
  EXPECT_NE(m.find("topology.nodes[2]"), std::string::npos) << m;
  EXPECT_NE(m.find("appears twice"), std::string::npos) << m;
  m = message(head + "axes:\n  - zip: {topology.nodes: [1, 1], workload.training.global_batch: [8, 8]}\n");
  EXPECT_NE(m.find("appears twice"), std::string::npos) << m;
  EXPECT_EQ(
      message(head + "axes:\n  - zip: {topology.nodes: [1, 1], workload.training.global_batch: [8, 16]}\n"),
      "(no error)");
  m = message(head + "axes:\n  - cases: [{name: a}, {name: b}]\n");
  EXPECT_NE(m.find("same values as case 'a'"), std::string::npos) << m;
  m = message(head + "filters: ['" + std::string(500, '(') + "1" + std::string(500, ')') + "']\n");
  EXPECT_NE(m.find("bad.yaml:4:"), std::string::npos) << m;
  EXPECT_NE(m.find("filters[0]"), std::string::npos) << m;
  EXPECT_NE(m.find("nested more than"), std::string::npos) << m;
  // Files that do not exist: named with the line and field of the study that names them.
  auto s = load_study(write(dir, "files.yaml", "name: f\ntopology: t.yaml\nworkload: w.yaml\n"));
  m = message_of([&] { check_files_exist(s); });
  EXPECT_NE(m.find("files.yaml:2:11: topology: t.yaml: no such file"), std::string::npos) << m;
  write(dir, "t.yaml", "");
  m = message_of([&] { check_files_exist(s); });
  EXPECT_NE(m.find("files.yaml:3:11: workload: w.yaml: no such file"), std::string::npos) << m;
  write(dir, "w.yaml", "");
  EXPECT_NO_THROW(check_files_exist(s));
  s = load_study(
      write(dir, "axis.yaml", "name: f\nworkload: w.yaml\naxes:\n  - grid: {topology: [t.yaml, u.yaml]}\n"));
  m = message_of([&] { check_files_exist(s); });
  EXPECT_NE(m.find("axis.yaml:4:"), std::string::npos) << m;
  EXPECT_NE(m.find("u.yaml: no such file"), std::string::npos) << m;
}

TEST(Study, ShippedStudiesLoadAndNameFilesThatExist) {
  int loaded = 0;
  for (const auto& e : fs::directory_iterator(std::string(PODSIM_SOURCE_DIR) + "/workloads/studies")) {
    auto s = load_study(e.path().string());
    EXPECT_NO_THROW(check_files_exist(s)) << e.path();
    loaded++;
  }
  EXPECT_GT(loaded, 3);
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
  EXPECT_NE(text.find(",the simulation process crashed with signal 11"), std::string::npos) << text;
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
  auto cell = [&](const ResultRow& r, const std::string& c) {
    return r.cells[std::find(columns.begin(), columns.end(), c) - columns.begin()];
  };
  auto row = cli::run_point(s, s.points[0], [](const cli::RunRequest&) -> report::RunResult {
    throw InvariantViolation("mfu 1.2 exceeds 1");
  });
  EXPECT_EQ(cell(row, "status"), "failed");
  EXPECT_NE(cell(row, "detail").find("mfu 1.2 exceeds 1"), std::string::npos);
  row = cli::run_point(s, s.points[0], [](const cli::RunRequest&) -> report::RunResult {
    throw InputError("w.yaml:3:1: parallel.tp: 3 does not divide 16 heads");
  });
  EXPECT_EQ(cell(row, "status"), "invalid");
  row = cli::run_point(s, s.points[0], [](const cli::RunRequest&) -> report::RunResult {
    throw InfeasibleConfig("out_of_memory", "needs 90 GiB of 80");
  });
  EXPECT_EQ(cell(row, "status"), "out_of_memory");
}
