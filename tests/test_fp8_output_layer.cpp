// Under the fp8 formats the output layer (Megatron-Core's own ColumnParallelLinear, not a Transformer
// Engine module) runs its logits GEMMs at the 16-bit rate, while the transformer layers' linears are
// quantized; under bf16 nothing changes.
#include <gtest/gtest.h>

#include "podsim/driver/simulation.hpp"
#include "podsim/workload/workload_model.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::workload;

namespace {

Overrides small(const std::string& precision) {
  return {{"model.layers", "2"},         {"parallel.tp", "1"},
          {"parallel.pp", "1"},          {"parallel.dp", "1"},
          {"parallel.cp", "1"},          {"parallel.zero", "0"},
          {"parallel.schedule", "1f1b"}, {"training.global_batch", "1"},
          {"training.micro_batch", "1"}, {"training.precision", precision},
          {"training.recompute", "none"}};
}

StepPlan describe(const std::string& precision) {
  auto topo = podsim::testing::preset("dgx-h100-superpod", {{"nodes", "1"}});
  auto model =
      load_workload_model(podsim::testing::source_path("workloads/llama3-8b.yaml"), small(precision), topo);
  return driver::simulate(topo, *model).plan;
}

const KernelCost* kernel(const StepPlan& plan, const std::string& group, const std::string& name) {
  for (const auto& k : plan.kernels)
    if (k.group == group && k.name == name) return &k;
  return nullptr;
}

}  // namespace

TEST(Fp8OutputLayer, LogitsGemmsRunAtTheSixteenBitRate) {
  StepPlan fp8 = describe("fp8");
  StepPlan bf16 = describe("bf16");
  const std::pair<const char*, const char*> logits[] = {{"output layer forward", "logits"},
                                                        {"output layer backward", "logits dgrad"},
                                                        {"output layer backward", "logits wgrad"}};
  for (const auto& [group, name] : logits) {
    const auto* a = kernel(fp8, group, name);
    const auto* b = kernel(bf16, group, name);
    ASSERT_NE(a, nullptr) << name;
    ASSERT_NE(b, nullptr) << name;
    EXPECT_DOUBLE_EQ(a->seconds, b->seconds) << name;
    // 2 * tokens * vocab * hidden for Llama 3 8B (8192 tokens, vocabulary 128256, hidden 4096)
    EXPECT_DOUBLE_EQ(a->flops, 2.0 * 8192 * 128256 * 4096) << name;
  }
  // The transformer layers' linears do run faster in fp8.
  EXPECT_LT(kernel(fp8, "layer forward", "MLP fc1")->seconds,
            kernel(bf16, "layer forward", "MLP fc1")->seconds);
}
