// moe.overlap: combined_1f1b (Megatron-Core's --overlap-moe-expert-parallel-comm): each steady-state
// forward runs with the backward of an earlier microbatch, the all-to-alls of one beside the other's
// compute. It hides expert-parallel time (never more than there was), holds one more microbatch's
// activations, keeps a host-bound layer host-bound, and refuses what Megatron-Core refuses.
#include <gtest/gtest.h>

#include "podsim/driver/simulation.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"
#include "podsim/workload/workload_model.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::workload;
using podsim::testing::error_of;
using podsim::testing::source_path;

namespace {

// Qwen3-30B-A3B cut to 4 layers on two H100 servers: ep 16 crosses the servers, 4 microbatches per rank.
Overrides qwen(const char* overlap, Overrides more = {}) {
  Overrides sets = {{"model.layers", "4"},         {"training.global_batch", "64"},
                    {"parallel.dp", "16"},         {"parallel.ep", "16"},
                    {"moe.overlap", overlap},      {"moe.dispatcher", "alltoall"},
                    {"training.recompute", "none"}};
  sets.insert(sets.end(), more.begin(), more.end());
  return sets;
}

report::RunResult run(const Overrides& sets) {
  auto topo = podsim::testing::preset("dgx-h100-superpod", {{"nodes", "2"}});
  auto model = load_workload_model(source_path("workloads/qwen3-30b-a3b.yaml"), sets, topo);
  auto r = driver::simulate(topo, *model);
  EXPECT_EQ(r.status, "ok") << r.status_detail;
  return r;
}

std::string refusal(const Overrides& sets) {
  auto topo = podsim::testing::preset("dgx-h100-superpod", {{"nodes", "2"}});
  return error_of([&] {
    auto model = load_workload_model(source_path("workloads/qwen3-30b-a3b.yaml"), sets, topo);
    driver::simulate(topo, *model);
  });
}

}  // namespace

// Without a pipeline: F0, (F1 B0), (F2 B1), (F3 B2), B3. Three of the four microbatches' forward and
// backward all-to-alls run beside compute, so the step is shorter, but by no more than the exposed
// expert-parallel time it had: the compute and the other communication are still there.
TEST(MoeCombined1F1B, HidesExpertParallelTimeAndNoMore) {
  auto none = run(qwen("none"));
  auto combined = run(qwen("combined_1f1b"));
  double ep_none = none.mean[Category::ep];
  ASSERT_GT(ep_none, 0);
  EXPECT_LT(combined.step_time(), none.step_time());
  EXPECT_LT(combined.mean[Category::ep], ep_none);
  EXPECT_GE(combined.step_time(), none.step_time() - ep_none);
  EXPECT_LE(combined.mfu(), 1.0);
}

// The extra warm-up forward keeps a second microbatch's activations alive.
TEST(MoeCombined1F1B, HoldsOneMoreMicrobatchOfActivations) {
  auto none = run(qwen("none"));
  auto combined = run(qwen("combined_1f1b"));
  EXPECT_GT(combined.memory_per_device(), none.memory_per_device());
  EXPECT_DOUBLE_EQ(combined.plan.memory[0].weights, none.plan.memory[0].weights);
}

// Pipelined with virtual stages (Megatron-Core's requirement): 2 stages x 2 chunks, 8 microbatches.
TEST(MoeCombined1F1B, RunsPipelinedWithVirtualStages) {
  Overrides pipe = {{"parallel.pp", "2"},
                    {"parallel.dp", "8"},
                    {"parallel.ep", "8"},
                    {"parallel.schedule", "interleaved"},
                    {"parallel.virtual_stages", "2"}};
  auto none = run(qwen("none", pipe));
  auto combined = run(qwen("combined_1f1b", pipe));
  EXPECT_LT(combined.step_time(), none.step_time());
  EXPECT_GE(combined.step_time(), none.step_time() - none.mean[Category::ep]);
}

// Host-bound MoE blocks (launch time far above the device's): a paired layer still needs both passes'
// host time, so pairing hides almost nothing, while the same layers device-bound gain (the test above).
TEST(MoeCombined1F1B, HostBoundLayersStayHostBound) {
  Overrides host = {{"moe.host_forward_us", "40000"}, {"moe.host_backward_us", "60000"}};
  auto none = run(qwen("none", host));
  auto combined = run(qwen("combined_1f1b", host));
  EXPECT_GT(none.step_time(), 4 * 4 * 0.1);  // 4 microbatches x 4 layers x 100 ms of host time
  EXPECT_NEAR(combined.step_time() / none.step_time(), 1.0, 0.03);
}

TEST(MoeCombined1F1B, RefusesWhatMegatronCoreRefuses) {
  struct Case {
    Overrides sets;
    const char* says;
  };
  const std::vector<Case> cases = {
      {qwen("combined_1f1b", {{"parallel.ep", "1"}}), "parallel.ep > 1"},
      {qwen("combined_1f1b", {{"moe.dispatcher", "allgather"}}), "alltoall or flex"},
      {qwen("combined_1f1b", {{"training.recompute", "full"}}), "recompute: full"},
      {qwen("combined_1f1b", {{"parallel.pp", "2"}, {"parallel.dp", "8"}, {"parallel.ep", "8"}}),
       "virtual_stages >= 2"},
      {qwen("combined_1f1b", {{"parallel.zero", "3"}}), "ZeRO-3"},
  };
  for (const auto& c : cases) {
    std::string e = refusal(c.sets);
    EXPECT_NE(e.find("overlap"), std::string::npos) << e;
    EXPECT_NE(e.find(c.says), std::string::npos) << c.says << ": " << e;
  }
}

// DeepEP / HybridEP hold moe.dispatcher_sms SMs while they move tokens: the compute the combined schedule
// runs beside them has the rest (H100: 132). Serially nothing runs beside them and the count changes
// nothing; overlapped, more held SMs make the step longer, yet never longer than not overlapping at all.
TEST(MoeCombined1F1B, FlexDispatcherSmsSlowTheComputeBesideThem) {
  auto flex = [](const char* overlap, const char* sms) {
    return run(qwen(overlap, {{"moe.dispatcher", "flex"}, {"moe.dispatcher_sms", sms}}));
  };
  EXPECT_DOUBLE_EQ(flex("none", "8").step_time(), flex("none", "64").step_time());
  double few = flex("combined_1f1b", "8").step_time(), many = flex("combined_1f1b", "64").step_time();
  double most = flex("combined_1f1b", "120").step_time();
  EXPECT_LT(few, many);
  EXPECT_LT(many, most);
  EXPECT_LE(most, flex("none", "120").step_time());
  // Megatron-Core's default (unset, or auto) is DeepEP's 20.
  double twenty = flex("combined_1f1b", "20").step_time();
  EXPECT_DOUBLE_EQ(run(qwen("combined_1f1b", {{"moe.dispatcher", "flex"}})).step_time(), twenty);
  EXPECT_DOUBLE_EQ(flex("combined_1f1b", "auto").step_time(), twenty);
}

TEST(MoeCombined1F1B, DispatcherSmsMustLeaveSmsToCompute) {
  std::string e = refusal(qwen("none", {{"moe.dispatcher", "flex"}, {"moe.dispatcher_sms", "132"}}));
  EXPECT_NE(e.find("dispatcher_sms"), std::string::npos) << e;
  EXPECT_NE(e.find("132 SMs"), std::string::npos) << e;
  EXPECT_NE(e.find("1..131"), std::string::npos) << e;
  e = refusal(qwen("none", {{"moe.dispatcher_sms", "0"}}));
  EXPECT_NE(e.find("dispatcher_sms"), std::string::npos) << e;
}
