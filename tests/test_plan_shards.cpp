// `podsim plan` in shards (driver/plan_shards.hpp): three shards, each with its own branch and bound, merged,
// rank exactly what one unsharded search ranks; a missing shard or a shard of another search is an error;
// the Slurm script runs the same search per array task.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "plan_test_request.hpp"
#include "podsim/driver/plan.hpp"
#include "podsim/driver/plan_shards.hpp"
#include "test_helpers.hpp"

namespace podsim {
namespace {

namespace fs = std::filesystem;
using testing::error_of;
using testing::source_path;

driver::PlanRequest small_request(const std::string& out) {
  return testing::small_plan_request(source_path("workloads/llama3-8b.yaml"), out);
}

std::string fresh_dir(const std::string& name) {
  std::string dir = (fs::temp_directory_path() / ("podsim-plan-shards-" + name)).string();
  fs::remove_all(dir);
  return dir;
}

TEST(PlanShards, MergedShardsRankWhatOneSearchRanks) {
  auto whole = driver::run_plan(small_request(""));
  ASSERT_GE(whole.result.ranked(), 3);
  std::string dir = fresh_dir("three");
  long long simulated = 0;
  for (int i = 0; i < 3; ++i) {
    auto request = small_request(dir);
    request.shard = std::to_string(i) + "/3";
    auto shard = driver::run_plan(request);
    ASSERT_EQ(shard.written.size(), 1u);
    EXPECT_TRUE(fs::exists(dir + "/plan.shard-" + std::to_string(i) + "-of-3.json"));
    EXPECT_FALSE(fs::exists(dir + "/plan.csv"));  // only merge writes the plan
    simulated += shard.result.simulated;
  }
  auto merged = driver::merge_plan_shards({dir}, "");
  EXPECT_EQ(merged.result.rows.size(), whole.result.rows.size());
  EXPECT_EQ(merged.result.enumerated, whole.result.enumerated);
  EXPECT_EQ(merged.result.skipped, whole.result.skipped);
  EXPECT_EQ(merged.result.simulated, simulated);
  EXPECT_GE(simulated, whole.result.simulated);  // shards bound more loosely, never less
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(merged.result.rows[i].values, whole.result.rows[i].values) << i;
    EXPECT_DOUBLE_EQ(merged.result.rows[i].sim().step_time, whole.result.rows[i].sim().step_time) << i;
  }
  EXPECT_TRUE(fs::exists(dir + "/plan.csv"));
  EXPECT_TRUE(fs::exists(dir + "/plan.html"));
  EXPECT_TRUE(driver::has_plan_shards(dir));
  fs::remove_all(dir);
}

// With --distinct the shards bound against their own k-th best group; merged, the groups ranked are the
// ones one search ranks, each at the same best candidate.
TEST(PlanShards, MergedShardsRankTheDistinctGroupsOneSearchRanks) {
  auto request = small_request("");
  request.options.distinct = {"tp"};
  request.options.top = 2;
  auto whole = driver::run_plan(request);
  std::vector<size_t> expected = whole.result.group_bests();
  ASSERT_GE(expected.size(), 2u);
  std::string dir = fresh_dir("distinct");
  request.out = dir;
  for (int i = 0; i < 2; ++i) {
    request.shard = std::to_string(i) + "/2";
    driver::run_plan(request);
  }
  auto merged = driver::merge_plan_shards({dir}, "");
  std::vector<size_t> got = merged.result.group_bests();
  ASSERT_GE(got.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(merged.result.rows[got[i]].values, whole.result.rows[expected[i]].values) << i;
    EXPECT_DOUBLE_EQ(merged.result.rows[got[i]].sim().step_time,
                     whole.result.rows[expected[i]].sim().step_time);
  }
  fs::remove_all(dir);
}

TEST(PlanShards, MissingOrForeignShardsAreClearErrors) {
  std::string dir = fresh_dir("missing");
  auto request = small_request(dir);
  request.shard = "1/3";
  driver::run_plan(request);
  std::string e = error_of([&] { driver::merge_plan_shards({dir}, ""); });
  EXPECT_NE(e.find("plan shard(s) 0, 2 of 3 have not written their file yet"), std::string::npos) << e;
  request.sets.push_back("workload.parallel.zero=1");  // another search
  request.shard = "0/3";
  driver::run_plan(request);
  request = small_request(dir);
  request.shard = "2/3";
  driver::run_plan(request);
  e = error_of([&] { driver::merge_plan_shards({dir}, ""); });
  EXPECT_NE(e.find("of different searches"), std::string::npos) << e;
  auto no_out = small_request("");
  no_out.shard = "0/2";
  e = error_of([&] { driver::run_plan(no_out); });
  EXPECT_NE(e.find("give --out"), std::string::npos) << e;
  fs::remove_all(dir);
}

// A row whose values do not fit this search (another build's key table, or values beyond the 32 bits a
// candidate holds each in) is a clear error, not a truncated candidate.
TEST(PlanShards, RowsOfAnotherKeyTableAreClearErrors) {
  std::string dir = fresh_dir("tampered");
  for (const char* shard : {"0/2", "1/2"}) {
    auto request = small_request(dir);
    request.shard = shard;
    driver::run_plan(request);
  }
  std::string file = dir + "/plan.shard-0-of-2.json";
  std::stringstream text;
  text << std::ifstream(file).rdbuf();
  std::string json = text.str();
  auto at = json.find("\"values\":[");
  ASSERT_NE(at, std::string::npos) << json.substr(0, 400);
  for (const char* bad : {"\"values\":[4294967296,", "\"values\":[1,2,"}) {
    std::string tampered = json;
    tampered.replace(at, std::string("\"values\":[").size(), bad);
    std::ofstream(file) << tampered;
    std::string e = error_of([&] { driver::merge_plan_shards({dir}, ""); });
    EXPECT_NE(e.find("not a shard of this podsim plan"), std::string::npos) << e;
  }
  fs::remove_all(dir);
}

TEST(PlanShards, SlurmScriptRunsTheSameSearchPerTask) {
  std::string dir = fresh_dir("slurm");
  auto request = small_request(dir);
  request.options.distinct = {"tp", "pp"};
  driver::SlurmSubmission job;
  job.out = dir;
  job.shards = 5;
  job.dry_run = true;
  auto done = driver::submit_slurm_plan(request, job);
  EXPECT_EQ(done.shards, 5);
  std::ifstream in(done.script);
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  EXPECT_NE(s.find("#SBATCH --array=0-4"), std::string::npos) << s;
  EXPECT_NE(s.find(" plan -t '"), std::string::npos) << s;
  EXPECT_NE(s.find("--set 'workload.parallel.tp=[1, 2, 4]'"), std::string::npos) << s;
  EXPECT_NE(s.find("--as-written"), std::string::npos) << s;
  EXPECT_NE(s.find("--distinct 'tp,pp'"), std::string::npos) << s;
  EXPECT_NE(s.find("--shard \"$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT\""), std::string::npos) << s;
  // Bad input fails at submission, not in every array task.
  request.sets.push_back("workload.model.layers=auto");
  EXPECT_NE(error_of([&] { driver::submit_slurm_plan(request, job); }).find("model.layers"),
            std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace podsim
