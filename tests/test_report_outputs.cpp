// The files of one run: summary.csv and breakdown.csv read back through podsim's CSV reader with the lane
// and workload names intact, an out_of_memory run writes every file it reports (breakdown.csv with memory
// and no time) and names the memory tier that did not fit, and unwritable paths are input errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "podsim/core/csv_table.hpp"
#include "podsim/core/error.hpp"
#include "podsim/report/output_files.hpp"
#include "podsim/report/writers.hpp"
#include "test_helpers.hpp"

namespace fs = std::filesystem;
using podsim::InputError;
using podsim::report::RunResult;

using podsim::testing::error_of;

namespace {

constexpr double GiB = 1073741824.0;

// A result as `simulate` leaves it, without a simulation: two lanes with awkward names.
RunResult two_lane_result(bool ok) {
  RunResult r;
  r.topology_name = "GPU PS, \"4 node\"";
  r.workload_name = "CTR model, 1e11 sparse features (~10 TB)";
  r.workload_kind = "ctr_sparse_ps";
  r.device_name = "V100";
  r.device_memory_capacity = 32 * GiB;
  r.plan.devices = 2;
  r.plan.graph.stages = 2;
  r.plan.graph.lane_names = {"server 0 (GPU 0, its host and SSD)", "lane \"two\"\nsecond line"};
  r.plan.memory.resize(2);
  r.plan.memory[0].weights = 7 * GiB;
  r.plan.memory[1].weights = 5 * GiB;
  if (ok) {
    r.replay.makespan = 2;
    for (int s = 0; s < 2; ++s) {
      podsim::report::StageBreakdown b;
      b.stage = s;
      b.seconds[static_cast<int>(podsim::workload::Category::compute)] = 1.5;
      b.idle = 0.5;
      r.stages.push_back(b);
    }
    r.mean = podsim::report::mean_breakdown(r.stages);
  } else {
    r.status = "out_of_memory";
    r.status_detail = "host DRAM: does not fit";
  }
  return r;
}

fs::path scratch(const std::string& name) {
  fs::path dir = fs::path(::testing::TempDir()) / ("podsim_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

}  // namespace

TEST(RunOutputs, SummaryAndBreakdownReadBackWithNamesIntact) {
  RunResult r = two_lane_result(true);
  auto summary = podsim::parse_csv(podsim::report::csv({podsim::report::summary_row(r)}), "summary.csv");
  ASSERT_EQ(summary.rows.size(), 1u);
  EXPECT_EQ(summary.columns, podsim::report::summary_columns());
  EXPECT_EQ(summary.text(0, "topology"), r.topology_name);
  EXPECT_EQ(summary.text(0, "workload"), r.workload_name);
  EXPECT_EQ(summary.text(0, "status"), "ok");
  EXPECT_EQ(summary.text(0, "out_of_memory_tier"), "");

  auto breakdown = podsim::parse_csv(podsim::report::breakdown_csv(r), "breakdown.csv");
  ASSERT_EQ(breakdown.rows.size(), 3u);  // two lanes and the mean
  EXPECT_EQ(breakdown.text(0, "stage"), r.plan.graph.lane_names[0]);
  EXPECT_EQ(breakdown.text(1, "stage"), r.plan.graph.lane_names[1]);
  EXPECT_EQ(breakdown.text(2, "stage"), "mean");
  EXPECT_DOUBLE_EQ(breakdown.number(0, "compute_s"), 1.5);
  EXPECT_DOUBLE_EQ(breakdown.number(1, "total_s"), 2);
  EXPECT_DOUBLE_EQ(breakdown.number(0, "memory_GiB"), 7);
}

TEST(RunOutputs, SummaryColumnsOnlyGrowAtTheEnd) {
  // The CLI contract's columns stay first and in order; the out-of-memory columns come after all others.
  const auto& c = podsim::report::summary_columns();
  std::vector<std::string> contract = {"devices", "step_time_s",           "tflops_per_device",
                                       "mfu",     "memory_per_device_GiB", "tokens_per_s",
                                       "status"};
  ASSERT_GE(c.size(), contract.size() + 3);
  for (size_t i = 0; i < contract.size(); ++i) EXPECT_EQ(c[i], contract[i]);
  auto at = [&](const std::string& name) { return std::find(c.begin(), c.end(), name) - c.begin(); };
  auto last = at("simulated_tasks");
  for (const char* next :
       {"out_of_memory_tier", "memory_needed_GiB", "memory_available_GiB",
        "mfu_causal",                                             // appended after them (issue 13)
        "rank_order", "sliding_window", "full_attention_every"})  // then these (session 41)
    EXPECT_EQ(at(next), ++last) << next;
  EXPECT_EQ(static_cast<size_t>(last), c.size() - 1);
}

TEST(RunOutputs, OutOfMemoryNamesTheTierThatDidNotFit) {
  RunResult r = two_lane_result(false);
  r.memory_shortfall = podsim::MemoryShortfall{"host DRAM", 1083 * GiB, 1024 * GiB};
  auto summary = podsim::parse_csv(podsim::report::csv({podsim::report::summary_row(r)}), "summary.csv");
  EXPECT_EQ(summary.text(0, "status"), "out_of_memory");
  EXPECT_DOUBLE_EQ(summary.number(0, "memory_per_device_GiB"), 7);  // the GPUs fit...
  EXPECT_EQ(summary.text(0, "out_of_memory_tier"), "host DRAM");    // ...their host does not
  EXPECT_DOUBLE_EQ(summary.number(0, "memory_needed_GiB"), 1083);
  EXPECT_DOUBLE_EQ(summary.number(0, "memory_available_GiB"), 1024);
  EXPECT_EQ(summary.text(0, "step_time_s"), "");
  EXPECT_NE(podsim::report::result_json(r).find("\"tier\": \"host DRAM\""), std::string::npos);

  // Without a tier from the workload, a lane over device memory is the culprit; within it, none is named.
  r.memory_shortfall.reset();
  r.plan.memory[0].weights = 40 * GiB;
  summary = podsim::parse_csv(podsim::report::csv({podsim::report::summary_row(r)}), "summary.csv");
  EXPECT_EQ(summary.text(0, "out_of_memory_tier"), "device memory");
  EXPECT_DOUBLE_EQ(summary.number(0, "memory_needed_GiB"), 40);
  EXPECT_DOUBLE_EQ(summary.number(0, "memory_available_GiB"), 32);
  r.plan.memory[0].weights = 7 * GiB;
  EXPECT_FALSE(r.out_of_memory().has_value());
  r.status = "ok";
  r.memory_shortfall = podsim::MemoryShortfall{"host DRAM", 1, 2};
  EXPECT_FALSE(r.out_of_memory().has_value());  // only an out_of_memory run has a culprit
}

TEST(RunOutputs, OutOfMemoryRunWritesEveryFileItReports) {
  fs::path dir = scratch("oom");
  fs::create_directories(dir);
  // A stale breakdown of an earlier run in the same directory must not survive as this run's.
  { std::ofstream(dir / "breakdown.csv") << "stage,compute_s\nstale,1\n"; }
  RunResult r = two_lane_result(false);
  auto written = podsim::report::write_run_outputs(r, dir.string());
  EXPECT_EQ(written, (std::vector<std::string>{"summary.csv", "breakdown.csv", "result.json"}));
  for (const auto& name : written) EXPECT_TRUE(fs::exists(dir / name)) << name;
  auto breakdown = podsim::read_csv((dir / "breakdown.csv").string());
  ASSERT_EQ(breakdown.rows.size(), 3u);
  EXPECT_EQ(breakdown.text(0, "stage"), r.plan.graph.lane_names[0]);
  EXPECT_EQ(breakdown.text(0, "compute_s"), "");  // not simulated: no time
  EXPECT_EQ(breakdown.text(0, "total_s"), "");
  EXPECT_DOUBLE_EQ(breakdown.number(0, "memory_GiB"), 7);
  EXPECT_DOUBLE_EQ(breakdown.number(1, "memory_GiB"), 5);
  EXPECT_DOUBLE_EQ(breakdown.number(2, "memory_GiB"), 7);
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
  fs::remove_all(dir);
}

TEST(OutputFiles, UnwritablePathsAreInputErrorsNamingThePath) {
  fs::path dir = scratch("paths");
  fs::create_directories(dir);
  fs::path file = dir / "a-file";
  { std::ofstream(file) << "x"; }
  // --out below a regular file cannot be created (even as root).
  std::string msg =
      error_of([&] { podsim::report::prepare_output_directory((file / "out").string(), "--out"); });
  EXPECT_NE(msg.find("--out " + (file / "out").string() + ": cannot create the directory"), std::string::npos)
      << msg;
  msg = error_of([&] { podsim::report::prepare_output_directory(file.string(), "--out"); });
  EXPECT_NE(msg.find("exists and is not a directory"), std::string::npos) << msg;
  // --trace naming a directory.
  msg = error_of([&] { podsim::report::prepare_output_file(dir.string(), "--trace"); });
  EXPECT_NE(msg.find("--trace " + dir.string() + ": is a directory; give a file name"), std::string::npos)
      << msg;
  msg = error_of([&] { podsim::report::prepare_output_file((file / "t.json").string(), "--trace"); });
  EXPECT_NE(msg.find("(its directory " + file.string() + "): exists and is not a directory"),
            std::string::npos)
      << msg;
  // atomic_write over a directory or into a missing directory fails cleanly, leaving no temporary file.
  msg = error_of([&] { podsim::report::atomic_write(dir.string(), "x"); });
  EXPECT_NE(msg.find("it is a directory"), std::string::npos) << msg;
  msg = error_of([&] { podsim::report::atomic_write((dir / "missing" / "f.csv").string(), "x"); });
  EXPECT_NE(msg.find("f.csv: cannot write the file"), std::string::npos) << msg;
  if (::geteuid() != 0) {  // permissions do not bind root
    fs::path ro = dir / "read-only";
    fs::create_directories(ro);
    fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
    msg = error_of([&] { podsim::report::prepare_output_directory(ro.string(), "--out"); });
    EXPECT_NE(msg.find("cannot write files in this directory"), std::string::npos) << msg;
    fs::permissions(ro, fs::perms::owner_all);
  }
  podsim::report::prepare_output_file((dir / "new" / "trace.json").string(), "--trace");
  EXPECT_TRUE(fs::is_directory(dir / "new"));
  std::vector<std::string> left;
  for (const auto& e : fs::recursive_directory_iterator(dir)) left.push_back(e.path().filename().string());
  for (const auto& name : left) EXPECT_EQ(name.find(".tmp"), std::string::npos) << name;
  fs::remove_all(dir);
}
