// training.attention: flash attention as one fused kernel per pass (causal FLOPs, backward 2.5x the
// forward, no s x s tensor in memory), its default per GPU generation, and the FLOP counts MFU and HFU use.
#include <gtest/gtest.h>

#include "podsim/core/error.hpp"
#include "podsim/driver/simulation.hpp"
#include "podsim/workload/transformer/memory_model.hpp"
#include "podsim/workload/transformer/transformer_loader.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"
#include "podsim/workload/workload_model.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::workload;

namespace {

const std::string kWorkload = "workloads/llama3-8b.yaml";

Overrides small(Overrides extra = {}) {
  Overrides o = {
      {"model.layers", "4"},          {"parallel.tp", "1"},           {"parallel.pp", "1"},
      {"parallel.dp", "1"},           {"parallel.cp", "1"},           {"parallel.zero", "0"},
      {"parallel.schedule", "1f1b"},  {"training.global_batch", "2"}, {"training.micro_batch", "1"},
      {"training.precision", "bf16"}, {"training.recompute", "none"}};
  o.insert(o.end(), extra.begin(), extra.end());
  return o;
}

topology::Topology preset(const std::string& name) {
  return podsim::testing::preset(name, {{"nodes", "1"}});
}

WorkloadConfig config(const topology::Topology& topo, Overrides extra = {}) {
  return load_workload(podsim::testing::source_path(kWorkload), small(extra), topo);
}

const KernelCost* kernel(const StepPlan& plan, const std::string& group, const std::string& name) {
  for (const auto& k : plan.kernels)
    if (k.group == group && k.name == name) return &k;
  return nullptr;
}

StepPlan describe(const topology::Topology& topo, Overrides extra = {}) {
  auto model = load_workload_model(podsim::testing::source_path(kWorkload), small(extra), topo);
  return driver::simulate(topo, *model).plan;
}

}  // namespace

TEST(FlashAttention, DefaultFollowsTheGpuGeneration) {
  EXPECT_EQ(config(preset("dgx-h100-superpod")).training.attention, Attention::flash);
  EXPECT_EQ(config(preset("dgx-a100-superpod"), {{"training.precision", "fp16"}}).training.attention,
            Attention::unfused);
  // Explicit choices are kept where the profile has the fused kernel's efficiencies (FA2 on A100).
  EXPECT_EQ(
      config(preset("dgx-a100-superpod"), {{"training.precision", "fp16"}, {"training.attention", "flash"}})
          .training.attention,
      Attention::flash);
  EXPECT_EQ(config(preset("dgx-h100-superpod"), {{"training.attention", "unfused"}}).training.attention,
            Attention::unfused);
}

TEST(FlashAttention, FlashWithoutFusedKernelEfficienciesIsAnInputError) {
  auto v100 = preset("dgx2h-v100");
  try {
    config(v100, {{"training.precision", "fp16"}, {"training.attention", "flash"}});
    FAIL() << "flash attention on a profile without fused-attention efficiencies must be refused";
  } catch (const InputError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("training.attention"), std::string::npos) << what;
    EXPECT_NE(what.find("unfused"), std::string::npos) << what;
  }
  EXPECT_THROW(config(preset("dgx-h100-superpod"), {{"training.attention", "fast"}}), InputError);
}

TEST(FlashAttention, OneCausalKernelPerPassWithTheBackwardAtTwoAndAHalfTimesTheForward) {
  auto topo = preset("dgx-h100-superpod");
  StepPlan plan = describe(topo);
  const auto* fwd = kernel(plan, "layer forward", "flash attention forward");
  const auto* bwd = kernel(plan, "layer backward", "flash attention backward");
  ASSERT_NE(fwd, nullptr);
  ASSERT_NE(bwd, nullptr);
  EXPECT_EQ(kernel(plan, "layer forward", "scale-mask-softmax"), nullptr);
  EXPECT_EQ(kernel(plan, "layer forward", "attention scores (QK^T)"), nullptr);
  // Llama 3 8B: 32 query heads of 128, s = 8192; causal: half the blocks plus the 64 diagonal ones.
  double s = 8192, d = 128, heads = 32, blocks = s / 128;
  double causal = (blocks + 1) / (2 * blocks);
  EXPECT_NEAR(fwd->flops, 4 * heads * s * s * d * causal, 1e-6 * fwd->flops);
  EXPECT_NEAR(bwd->flops, 2.5 * fwd->flops, 1e-9 * bwd->flops);
  // No s x s tensor: the forward reads Q, K, V (8 KV heads) and writes O and the logsumexp.
  double bytes = 2 * s * d * (heads + 2 * 8) + 2 * s * d * heads + 4 * s * heads;
  EXPECT_NEAR(fwd->bytes, bytes, 1e-9 * bytes);
  // Never faster than the 16-bit peak.
  EXPECT_GE(fwd->seconds, fwd->flops / topo.device.peak(topology::Precision::bf16));
}

TEST(FlashAttention, MfuCountsCausalAttentionAndHfuWhatTheKernelsExecute) {
  auto topo = preset("dgx-h100-superpod");
  WorkloadConfig w = config(topo);
  StepPlan flash = describe(topo);
  StepPlan unfused = describe(topo, {{"training.attention", "unfused"}});
  double B = 2;
  EXPECT_DOUBLE_EQ(flash.model_flops, model_flops_causal(w.model, B));
  EXPECT_DOUBLE_EQ(unfused.model_flops, model_flops(w.model, B));
  // Flash: the causal count plus half a forward attention per layer (the backward runs 2.5x, not 2x).
  double attention_forward_causal = 0.5 * 4 * B * 8192.0 * 8192.0 * 32 * 128;
  EXPECT_NEAR(flash.hardware_flops, model_flops_causal(w.model, B) + 0.5 * 4 * attention_forward_causal,
              1e-9 * flash.hardware_flops);
  EXPECT_GT(unfused.hardware_flops, flash.hardware_flops);
  EXPECT_LE(flash.model_flops, flash.hardware_flops);
}

TEST(FlashAttention, NoScoresInActivationMemory) {
  auto topo = preset("dgx-h100-superpod");
  WorkloadConfig flash = config(topo);
  WorkloadConfig unfused = config(topo, {{"training.attention", "unfused"}});
  double s = 8192, a = 32;
  // Unfused keeps softmax output, dropout mask and output per query head (2 + 1 + 2 bytes), only the
  // softmax output (2 bytes) without dropout (Llama 3: model.dropout 0); flash only its fp32 logsumexp per
  // query row.
  double gap = s * s * a * 2 - s * a * 4;
  EXPECT_NEAR(
      layer_activation_bytes(unfused, 1, Recompute::none) - layer_activation_bytes(flash, 1, Recompute::none),
      gap, 1e-6 * gap);
  WorkloadConfig flash_dropout = config(topo, {{"model.dropout", "0.1"}});
  WorkloadConfig unfused_dropout =
      config(topo, {{"training.attention", "unfused"}, {"model.dropout", "0.1"}});
  double dropout_gap = s * s * a * 5 - s * a * 4;
  EXPECT_NEAR(layer_activation_bytes(unfused_dropout, 1, Recompute::none) -
                  layer_activation_bytes(flash_dropout, 1, Recompute::none),
              dropout_gap, 1e-6 * dropout_gap);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(flash, 1, Recompute::selective),
                   layer_activation_bytes(unfused, 1, Recompute::selective));
}

TEST(FlashAttention, UnfusedAttentionGemmsStayInBf16UnderFp8) {
  // Transformer Engine quantizes the linear layers' GEMMs only: Q K^T and P V run at the 16-bit rate.
  auto topo = preset("dgx-h100-superpod");
  StepPlan fp8 = describe(topo, {{"training.attention", "unfused"}, {"training.precision", "fp8"}});
  StepPlan bf16 = describe(topo, {{"training.attention", "unfused"}});
  for (const char* name : {"attention scores (QK^T)", "attention over values"}) {
    const auto* a = kernel(fp8, "layer forward", name);
    const auto* b = kernel(bf16, "layer forward", name);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_DOUBLE_EQ(a->seconds, b->seconds) << name;
  }
  // while the linear layers do run faster in fp8
  EXPECT_LT(kernel(fp8, "layer forward", "MLP fc1")->seconds,
            kernel(bf16, "layer forward", "MLP fc1")->seconds);
}

// model.dropout decides the dropout kernels, not only the masks in memory: without dropout PyTorch's
// dropout returns its input (no kernel, no mask), so the residual add moves 3 tensors, the unfused
// attention has no dropout over its scores and the embedding none after the lookup; with dropout each
// writes a one-byte mask per element that its backward reads.
TEST(Dropout, KernelsFollowModelDropout) {
  auto topo = preset("dgx-h100-superpod");
  StepPlan without = describe(topo, {{"training.attention", "unfused"}});  // Llama 3: dropout 0
  StepPlan with = describe(topo, {{"training.attention", "unfused"}, {"model.dropout", "0.1"}});
  double s = 8192, h = 4096, heads = 32, eb = 2, E = s * h, scores = heads * s * s;
  for (const char* name : {"attention dropout", "dropout-add", "embedding dropout"})
    EXPECT_EQ(kernel(without, "layer forward", name), nullptr) << name;
  EXPECT_EQ(kernel(without, "layer backward", "attention dropout backward"), nullptr);
  EXPECT_EQ(kernel(without, "embedding forward", "embedding dropout"), nullptr);
  const auto* add = kernel(without, "layer forward", "residual add");
  ASSERT_NE(add, nullptr);
  EXPECT_DOUBLE_EQ(add->bytes, 3 * E * eb);
  const auto* add_back = kernel(without, "layer backward", "residual add backward");
  ASSERT_NE(add_back, nullptr);
  EXPECT_DOUBLE_EQ(add_back->bytes, 3 * E * eb);

  const auto* dropout_add = kernel(with, "layer forward", "dropout-add");
  ASSERT_NE(dropout_add, nullptr);
  EXPECT_DOUBLE_EQ(dropout_add->bytes, E * (3 * eb + 1));
  const auto* dropout_back = kernel(with, "layer backward", "dropout-add backward");
  ASSERT_NE(dropout_back, nullptr);
  EXPECT_DOUBLE_EQ(dropout_back->bytes, E * (2 * eb + 1) + 3 * E * eb);
  const auto* scores_dropout = kernel(with, "layer forward", "attention dropout");
  ASSERT_NE(scores_dropout, nullptr);
  EXPECT_DOUBLE_EQ(scores_dropout->bytes, scores * (2 * eb + 1));
  ASSERT_NE(kernel(with, "layer backward", "attention dropout backward"), nullptr);
  ASSERT_NE(kernel(with, "embedding forward", "embedding dropout"), nullptr);
}

// With fused attention the dropout over the scores is inside the kernel, whose measured efficiencies are
// without dropout: the run says so rather than costing it silently at the dropout-free rate.
TEST(Dropout, FusedAttentionSaysItsDropoutIsNotCosted) {
  auto topo = preset("dgx-h100-superpod");
  auto says_not_costed = [](const StepPlan& plan) {
    for (const auto& n : plan.notes)
      if (n.find("dropout inside the kernel") != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(says_not_costed(describe(topo, {{"model.dropout", "0.1"}})));
  EXPECT_FALSE(says_not_costed(describe(topo)));
}
