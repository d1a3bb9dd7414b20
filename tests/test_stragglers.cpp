// Slow devices (issue 19): topology `slowdown:` / `straggler:`, replicas told apart by their speed per
// pipeline stage, the step gated by the slowest. Closed forms: a slow device in a data-parallel job without
// overlap lengthens the step by exactly its extra device time; a slow device outside the job changes nothing.
#include <gtest/gtest.h>

#include "podsim/driver/simulation.hpp"
#include "podsim/workload/workload_model.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using podsim::testing::error_of;
using podsim::testing::source_path;

namespace {

using Sets = std::vector<std::pair<std::string, std::string>>;

// Llama 3 8B cut to 2 layers; `slowdown` is the topology's list (YAML flow text) or empty.
report::RunResult run_llama(const std::string& slowdown, Sets work, int nodes = 1) {
  topology::Overrides topo_sets = {{"nodes", std::to_string(nodes)}};
  if (!slowdown.empty()) topo_sets.emplace_back("slowdown", slowdown);
  auto topo = podsim::testing::preset("dgx-h100-superpod", topo_sets);
  Sets base = {{"model.layers", "2"},
               {"parallel.tp", "1"},
               {"parallel.pp", "1"},
               {"parallel.dp", "8"},
               {"training.global_batch", "16"},
               {"parallel.dp_overlap", "false"},
               {"parallel.virtual_stages", "1"},
               {"parallel.schedule", "1f1b"}};
  base.insert(base.end(), work.begin(), work.end());
  auto model = workload::load_workload_model(source_path("workloads/llama3-8b.yaml"), base, topo);
  return driver::simulate(topo, *model);
}

double device_seconds(const report::RunResult& r) {
  double sum = 0;
  for (const auto& t : r.plan.graph.tasks) sum += t.stage >= 0 ? t.compute_seconds : 0;
  return sum;
}

}  // namespace

TEST(Stragglers, ASlowDeviceWithoutOverlapAddsExactlyItsExtraDeviceTime) {
  auto balanced = run_llama("", {});
  auto slow = run_llama("[{device: 3, factor: 0.5}]", {});
  ASSERT_TRUE(slow.ok()) << slow.status_detail;
  ASSERT_TRUE(slow.stragglers);
  const auto& o = *slow.stragglers;
  EXPECT_EQ(o.slow_devices, 1);
  EXPECT_EQ(o.slow_replicas, 1);
  EXPECT_EQ(o.replicas, 8);
  EXPECT_EQ(o.gating_replica, 3);  // tp 1, cp 1: device 3 is replica 3
  EXPECT_EQ(o.patterns_simulated, 1);
  EXPECT_DOUBLE_EQ(o.balanced_step, balanced.step_time());
  // One stage, no overlap: every device second of the representative is on the critical path, now 2x.
  double balanced_device = device_seconds(balanced);
  EXPECT_NEAR(slow.step_time(), balanced.step_time() + balanced_device, 1e-6 * slow.step_time());
  EXPECT_NEAR(device_seconds(slow), 2 * balanced_device, 1e-9 * balanced_device);
  EXPECT_GT(o.loss(), 0);
  bool noted = false;
  for (const auto& n : slow.plan.notes) noted |= n.find("stragglers: 1 slow devices") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(Stragglers, TheSlowerPatternGatesAndTheDominatedOneIsNotReplayed) {
  auto r = run_llama("[{device: 1, factor: 0.9}, {device: 2, factor: 0.5}, {node: 0, factor: 0.95}]", {});
  ASSERT_TRUE(r.stragglers);
  EXPECT_EQ(r.stragglers->slow_devices, 8);  // the whole node throttles
  EXPECT_EQ(r.stragglers->gating_replica, 2);
  EXPECT_EQ(r.stragglers->patterns_simulated, 1);  // 0.5 x 0.95 is slower than every other replica
  ASSERT_EQ(r.stragglers->gating_stage_speed.size(), 1u);
  EXPECT_DOUBLE_EQ(r.stragglers->gating_stage_speed[0], 0.5 * 0.95);
}

TEST(Stragglers, ASlowStageOfAPipelineGatesTheStep) {
  Sets pp2 = {{"parallel.pp", "2"}, {"parallel.dp", "4"}, {"parallel.zero", "1"}};
  auto balanced = run_llama("", pp2);
  // Device 6: tp 1, cp 1, dp 4 -> replica 2 of stage 1.
  auto slow = run_llama("[{device: 6, factor: 0.8}]", pp2);
  ASSERT_TRUE(slow.stragglers);
  EXPECT_EQ(slow.stragglers->gating_replica, 2);
  ASSERT_EQ(slow.stragglers->gating_stage_speed.size(), 2u);
  EXPECT_DOUBLE_EQ(slow.stragglers->gating_stage_speed[0], 1);
  EXPECT_DOUBLE_EQ(slow.stragglers->gating_stage_speed[1], 0.8);
  EXPECT_GT(slow.step_time(), balanced.step_time());
  // Never slower than the whole replica running at 0.8x (device time / 0.8 + the same communication).
  EXPECT_LT(slow.step_time(), balanced.step_time() / 0.8);
}

TEST(Stragglers, SlowDevicesOutsideTheJobChangeNothing) {
  auto balanced = run_llama("", {}, 2);
  auto r = run_llama("[{node: 1, factor: 0.5}]", {}, 2);  // the job uses node 0's 8 GPUs only
  ASSERT_TRUE(r.stragglers);
  EXPECT_EQ(r.stragglers->slow_devices, 0);
  EXPECT_DOUBLE_EQ(r.step_time(), balanced.step_time());
}

TEST(Stragglers, ExpertParallelReplicasMoveInLockstep) {
  auto topo = podsim::testing::preset("dgx-h100-superpod",
                                      {{"nodes", "1"}, {"slowdown", "[{device: 5, factor: 0.5}]"}});
  Sets sets = {
      {"model.layers", "4"}, {"training.global_batch", "8"}, {"parallel.dp", "8"}, {"parallel.ep", "8"}};
  auto model = workload::load_workload_model(source_path("workloads/qwen3-30b-a3b.yaml"), sets, topo);
  auto r = driver::simulate(topo, *model);
  ASSERT_TRUE(r.ok()) << r.status_detail;
  ASSERT_TRUE(r.stragglers);
  EXPECT_EQ(r.stragglers->lockstep_replicas, 8);
  EXPECT_EQ(r.stragglers->gating_replica, 0);  // the group of replicas 0-7 moves at device 5's pace
}

TEST(Stragglers, DrawIsReproducibleFromItsSeed) {
  auto draw = [](const std::string& seed) {
    return podsim::testing::preset(
               "dgx-h100-superpod",
               {{"nodes", "4"}, {"straggler", "{fraction: 0.25, factor: 0.9, seed: " + seed + "}"}})
        .device_speed;
  };
  auto a = draw("7"), b = draw("7"), c = draw("8");
  EXPECT_EQ(a.slow_devices(), 8);  // 25% of 32
  EXPECT_EQ(a.factor, b.factor);
  EXPECT_NE(a.factor, c.factor);
  EXPECT_TRUE(podsim::testing::preset("dgx-h100-superpod", {{"nodes", "1"}}).device_speed.nominal());
}

TEST(Stragglers, BadSlowdownsAreClearErrors) {
  auto topo_error = [](const std::string& key, const std::string& value) {
    return error_of([&] { podsim::testing::preset("dgx-h100-superpod", {{"nodes", "2"}, {key, value}}); });
  };
  EXPECT_NE(topo_error("slowdown", "[{device: 3, factor: 0}]").find("in (0, 1]"), std::string::npos);
  EXPECT_NE(topo_error("slowdown", "[{device: 3, factor: 1.5}]").find("factor"), std::string::npos);
  EXPECT_NE(topo_error("slowdown", "[{device: 3, node: 1, factor: 0.5}]").find("exactly one of node"),
            std::string::npos);
  EXPECT_NE(topo_error("slowdown", "[{node: 2, factor: 0.5}]").find("node"), std::string::npos);
  EXPECT_NE(topo_error("slowdown", "[{device: 3, factor: 0.5, speed: 2}]").find("speed"), std::string::npos);
  EXPECT_NE(topo_error("straggler", "{fraction: 0, factor: 0.9}").find("fraction"), std::string::npos);
  // A kind that does not tell its replicas apart says so.
  auto torus = podsim::testing::preset("tpu-v3-pod", {{"slowdown", "[{device: 0, factor: 0.5}]"}});
  auto model = workload::load_workload_model(source_path("workloads/gshard-moe.yaml"), {}, torus);
  std::string e = error_of([&] { driver::simulate(torus, *model); });
  EXPECT_NE(e.find("does not tell its replicas apart"), std::string::npos) << e;
}
