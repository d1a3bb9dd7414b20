// How Transformer Engine quantizes GEMM inputs under each fp8-family format (precision_bytes.hpp): the
// delayed and current scaling recipes of per-tensor fp8, the transposed copies only Hopper's TN-only fp8
// GEMMs need, the norm TE fuses with QKV and fc1, and the two block layouts of MXFP8.
#include <gtest/gtest.h>

#include <algorithm>

#include "podsim/calibration/compute_model.hpp"
#include "podsim/driver/megatron_args.hpp"
#include "podsim/workload/transformer/layer_ops.hpp"
#include "podsim/workload/transformer/precision_bytes.hpp"
#include "podsim/workload/transformer/transformer_loader.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::workload;
using topology::Precision;

namespace {

TrainingConfig training(Precision p, Fp8Recipe recipe, bool transposed) {
  TrainingConfig t;
  t.precision = p;
  t.fp8_recipe = recipe;
  t.fp8_transposed_copies = transposed;
  return t;
}

WorkloadConfig llama(const std::string& system, const std::string& precision, const std::string& recipe) {
  auto topo = podsim::testing::preset(system, {{"nodes", "1"}});
  Overrides o = {{"model.layers", "2"},
                 {"parallel.tp", "1"},
                 {"parallel.pp", "1"},
                 {"parallel.dp", "1"},
                 {"parallel.zero", "0"},
                 {"training.global_batch", "1"},
                 {"training.micro_batch", "1"},
                 {"training.precision", precision},
                 {"training.fp8_recipe", recipe},
                 {"training.recompute", "none"}};
  return load_workload(podsim::testing::source_path("workloads/llama3-8b.yaml"), o, topo);
}

double forward_bytes(const WorkloadConfig& w) {
  auto p = calibration::load_device_profile(
      podsim::testing::source_path("calibration/profiles/h100-sxm5-80gb.yaml"));
  calibration::ComputeModel cm(p, {1979e12, 3350e9, 132, 1, "fp8"});
  double bytes = 0;
  for (const auto& op : layer_costs(w, 1, cm).forward.ops)
    if (!op.gemm) bytes += op.bytes;
  return bytes;
}

}  // namespace

TEST(Fp8Recipe, QuantizeBytesPerElementFollowTransformerEngine) {
  using R = Fp8Recipe;
  const auto norm = GemmInput::fused_norm_output, other = GemmInput::other;
  // Delayed scaling on Hopper: read bf16, write fp8 and its transpose; after the fused norm (which wrote
  // fp8 itself) only the transpose kernel (read and write fp8). Blackwell needs no transpose.
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(training(Precision::fp8, R::delayed, true), other), 4);
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(training(Precision::fp8, R::delayed, true), norm), 2);
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(training(Precision::fp8, R::delayed, false), other), 3);
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(training(Precision::fp8, R::delayed, false), norm), 0);
  // Current scaling: an amax pass (one more bf16 read) before the cast, which the fused norm does itself.
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(training(Precision::fp8, R::current, true), other), 6);
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(training(Precision::fp8, R::current, true), norm), 4);
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(training(Precision::fp8, R::current, false), other), 5);
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(training(Precision::fp8, R::current, false), norm), 3);
  // MXFP8: both 1x32 block layouts with a scale byte per 32, no amax pass, the norm not fused.
  for (auto input : {norm, other})
    EXPECT_DOUBLE_EQ(quantize_bytes_per_element(training(Precision::mxfp8, R::delayed, false), input),
                     2 + 2 * (1 + 1.0 / 32));
  // NVFP4: per-tensor amax pass, then both 1x16 layouts (half a byte + a scale byte per 16).
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(training(Precision::nvfp4, R::delayed, false), other),
                   2 + 2 + 2 * (0.5 + 1.0 / 16));
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(training(Precision::bf16, R::current, true), other), 0);
  // The fused norm's output: fp8 only when delayed scaling lets it quantize.
  EXPECT_DOUBLE_EQ(fused_norm_bytes(training(Precision::fp8, R::delayed, true)), 1);
  EXPECT_DOUBLE_EQ(fused_norm_bytes(training(Precision::fp8, R::current, true)), 2);
  EXPECT_DOUBLE_EQ(fused_norm_bytes(training(Precision::mxfp8, R::delayed, false)), 2);
  // A tensor-parallel all-gather moves the row-wise quantized operand (scales included), bf16 otherwise.
  EXPECT_DOUBLE_EQ(gathered_operand_bytes(training(Precision::fp8, R::current, true)), 1);
  EXPECT_DOUBLE_EQ(gathered_operand_bytes(training(Precision::mxfp8, R::delayed, false)), 1 + 1.0 / 32);
  EXPECT_DOUBLE_EQ(gathered_operand_bytes(training(Precision::nvfp4, R::delayed, false)), 0.5 + 1.0 / 16);
  EXPECT_DOUBLE_EQ(gathered_operand_bytes(training(Precision::bf16, R::delayed, true)), 2);
  // Cached weights: bf16 plus the quantized copies.
  EXPECT_DOUBLE_EQ(weight_bytes(training(Precision::fp8, R::delayed, true)), 4);
  EXPECT_DOUBLE_EQ(weight_bytes(training(Precision::fp8, R::delayed, false)), 3);
  EXPECT_DOUBLE_EQ(weight_bytes(training(Precision::mxfp8, R::delayed, false)), 2 + 2 * (1 + 1.0 / 32));
}

TEST(Fp8Recipe, TheDeviceDecidesTheTransposedCopies) {
  EXPECT_TRUE(llama("dgx-h100-superpod", "fp8", "delayed").training.fp8_transposed_copies);
  EXPECT_FALSE(llama("dgx-b200-superpod", "fp8", "delayed").training.fp8_transposed_copies);
  EXPECT_EQ(llama("dgx-h100-superpod", "fp8", "current").training.fp8_recipe, Fp8Recipe::current);
  // Like Megatron-LM's --fp8-recipe, the key is accepted (and unused) with the other formats.
  EXPECT_NO_THROW(llama("dgx-b200-superpod", "mxfp8", "current"));
  EXPECT_THROW(llama("dgx-h100-superpod", "fp8", "tensorwise"), InputError);
}

TEST(Fp8Recipe, CurrentScalingMovesTheClosedFormMoreBytes) {
  // One Llama 3 8B layer at tp 1 on Hopper, per token of the forward: current scaling adds an amax read
  // (2 bytes) of the projection and fc2 inputs, makes the two fused norms write bf16 (+1 byte each) and
  // their GEMM inputs cast from it (4 instead of 2 bytes).
  double T = 8192, h = 4096, attention = 32 * 128, f = 14336;
  double delayed = forward_bytes(llama("dgx-h100-superpod", "fp8", "delayed"));
  double current = forward_bytes(llama("dgx-h100-superpod", "fp8", "current"));
  EXPECT_NEAR(current - delayed, T * (2 * (1 + 2) * h + 2 * attention + 2 * f), 1e-3 * delayed);
  EXPECT_GT(current, delayed);
  // Blackwell drops the transposes: fewer bytes than Hopper under either recipe.
  EXPECT_LT(forward_bytes(llama("dgx-b200-superpod", "fp8", "current")), current);
}

TEST(Fp8Recipe, MegatronTensorwiseIsCurrentScaling) {
  auto sets = [](const std::string& args) { return driver::parse_megatron_args(args, "cmd").sets; };
  auto has = [](const std::vector<std::string>& s, const char* v) {
    return std::find(s.begin(), s.end(), v) != s.end();
  };
  EXPECT_TRUE(has(sets("--bf16 --fp8-format hybrid --fp8-recipe tensorwise"),
                  "workload.training.fp8_recipe=current"));
  EXPECT_TRUE(
      has(sets("--bf16 --fp8-format hybrid --fp8-recipe delayed"), "workload.training.fp8_recipe=delayed"));
  EXPECT_TRUE(has(sets("--bf16 --fp8-format hybrid"), "workload.training.fp8_recipe=delayed"));
  EXPECT_FALSE(
      has(sets("--bf16 --fp8-format hybrid --fp8-recipe mxfp8"), "workload.training.fp8_recipe=delayed"));
}
