// The driver layer's use cases called as library functions, without the binary: what `podsim sweep`,
// `podsim merge` and `podsim validate` do once their options are parsed.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "podsim/core/error.hpp"
#include "podsim/driver/merge.hpp"
#include "podsim/driver/sweep.hpp"
#include "podsim/driver/validate.hpp"
#include "study_test_helpers.hpp"
#include "test_helpers.hpp"

namespace podsim {
namespace {

using podsim::testing::source_path;
using study::test_support::temp_dir;
using study::test_support::write;

TEST(DriverSweep, ParsesShardAndRejectsOutOfRange) {
  EXPECT_EQ(driver::parse_shard("2/8"), std::make_pair(2, 8));
  EXPECT_EQ(driver::parse_shard("0/1"), std::make_pair(0, 1));
  EXPECT_THROW(driver::parse_shard("8/8"), InputError);
  EXPECT_THROW(driver::parse_shard("0/0"), InputError);
  EXPECT_THROW(driver::parse_shard("two/8"), InputError);
}

TEST(DriverSweep, BadJobsIsInputErrorBeforeAnyPointRuns) {
  driver::SweepRequest r;
  r.study_file = source_path("workloads/studies/gpt3-what-if.yaml");
  r.out = temp_dir("driver-jobs");
  r.jobs = -1;
  try {
    driver::run_sweep(r);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--jobs -1"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(r.out + "/results.csv"));
}

TEST(DriverMerge, NamesTheMissingShard) {
  std::string dir = temp_dir("driver-merge");
  write(dir, "results.shard-0-of-2.csv", "point,point_id,status\n0,a,ok\n");
  try {
    driver::merge_sweeps({{dir}, ""});
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("shard(s) 1 of 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(driver::merge_sweeps({{dir + "/absent"}, ""}), InputError);
}

TEST(DriverMerge, JoinsShardsInPointOrder) {
  std::string dir = temp_dir("driver-merge-ok");
  write(dir, "results.shard-0-of-2.csv", "point,point_id,status\n0,a,ok\n2,c,ok\n");
  write(dir, "results.shard-1-of-2.csv", "point,point_id,status\n1,b,invalid\n");
  auto merged = driver::merge_sweeps({{dir}, dir + "/all"});
  EXPECT_EQ(merged.shard_files, 2u);
  EXPECT_EQ(merged.points, 3u);
  auto table = study::read_results(merged.results_file);
  ASSERT_EQ(table.rows.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(table.rows[i].point, i);
  EXPECT_TRUE(std::filesystem::exists(merged.report));
}

const char* kHeader =
    "params_billion,attention_heads,hidden_size,layers,tensor_parallel,pipeline_parallel,gpus,global_batch,"
    "tflops_per_gpu,micro_batch,layers_per_virtual_stage,ddp\n";

driver::ValidationRequest request_for(const std::string& table) {
  return {table, source_path("topologies/dgx-a100-superpod.yaml"), source_path("workloads/gpt3-175b.yaml")};
}

TEST(DriverValidate, PredictsARowAndReportsItsError) {
  std::string dir = temp_dir("driver-validate");
  // Megatron SC21 Table 1, first row: 1.7B parameters on 32 GPUs, 137 TFLOP/s per GPU published.
  std::string table = write(dir, "t.csv", std::string(kHeader) + "1.7,24,2304,24,1,1,32,512,137,16,,torch\n");
  size_t started = 0, done = 0;
  driver::ValidationHooks hooks;
  hooks.row_started = [&](size_t i, size_t n, const driver::ValidationRow& row) {
    EXPECT_EQ(n, 1u);
    EXPECT_EQ(row.dp, 32);
    started++;
  };
  hooks.row_done = [&](const driver::ValidationRow&) { done++; };
  auto v = driver::validate(request_for(table), hooks);
  EXPECT_EQ(started, 1u);
  EXPECT_EQ(done, 1u);
  ASSERT_EQ(v.rows.size(), 1u);
  const auto& row = v.rows[0];
  EXPECT_EQ(row.status, "ok");
  // Below the A100's 312 TFLOP/s dense fp16 peak: anything above it would be physically impossible.
  EXPECT_GT(row.predicted_tflops, 0);
  EXPECT_LT(row.predicted_tflops, 312);
  EXPECT_NEAR(row.error_percent, 100 * (row.predicted_tflops - 137) / 137, 1e-9);
  EXPECT_DOUBLE_EQ(v.mean_abs_error, std::fabs(row.error_percent));
  driver::write_validation_csv(dir + "/out", v);
  EXPECT_TRUE(std::filesystem::exists(dir + "/out/validation.csv"));
}

TEST(DriverValidate, RowWithoutAColumnIsInputError) {
  std::string dir = temp_dir("driver-validate-bad");
  std::string table = write(dir, "t.csv", "params_billion,gpus\n1.7,32\n");
  EXPECT_THROW(driver::validate(request_for(table)), InputError);
}

}  // namespace
}  // namespace podsim
