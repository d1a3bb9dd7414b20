// The fused attention kernel's shape terms (calibration/device_profile.hpp FusedAttentionParams): causal
// masking, head width and the fixed cost of each thread block, against the published cuDNN figures the
// Hopper profiles are fitted to (FlashAttention-3, Shah et al. 2024, Figs. 5-6; values in the profile's
// provenance).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "podsim/calibration/compute_model.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using calibration::AttentionShape;
using calibration::ComputeModel;

namespace {

calibration::DeviceProfile profile(const std::string& name) {
  return calibration::load_device_profile(podsim::testing::source_path("calibration/profiles/" + name));
}

// The figures' setting: batch x seqlen = 16k tokens, 2048 hidden, bf16, at burst clock (a benchmark).
ComputeModel h100_at_burst() {
  auto p = profile("h100-sxm5-80gb.yaml");
  p.clock_sustain_factor = 1;
  return ComputeModel(p, {989e12, 3350e9, 132, 2});
}

AttentionShape figure_shape(double seq, double head_dim, bool causal) {
  double batch = 16384 / seq, heads = 2048 / head_dim;
  return AttentionShape{batch * heads, seq, seq, head_dim, 0, 2, causal};
}

// TFLOP/s as the figures count them: causal attention as half the full square.
double figure_tflops(const calibration::AttentionEstimate& e, const AttentionShape& a, bool forward) {
  double full = (forward ? 4.0 : 10.0) * a.batch_heads * a.q_len * a.kv_len * a.head_dim;
  return (a.causal ? full / 2 : full) / e.seconds / 1e12;
}

const double kSeq[] = {1024, 2048, 4096, 8192, 16384};

}  // namespace

TEST(AttentionShape, HopperForwardReproducesTheCudnnFiguresFrom1kTo16k) {
  ComputeModel cm = h100_at_burst();
  struct Row {
    double head_dim;
    bool causal;
    double tflops[5];  // 1k, 2k, 4k, 8k, 16k
  };
  const Row rows[] = {{128, false, {574, 617, 609, 600, 595}}, {128, true, {410, 484, 518, 529, 539}},
                      {64, false, {373, 395, 408, 412, 413}},  {64, true, {288, 334, 363, 379, 388}},
                      {256, false, {546, 580, 581, 580, 581}}, {256, true, {391, 450, 483, 497, 509}}};
  for (const auto& r : rows)
    for (int i = 0; i < 5; ++i) {
      AttentionShape a = figure_shape(kSeq[i], r.head_dim, r.causal);
      double got = figure_tflops(cm.fused_attention_forward(a), a, true);
      EXPECT_NEAR(got / r.tflops[i], 1.0, 0.06)
          << "d " << r.head_dim << " causal " << r.causal << " s " << kSeq[i];
    }
}

TEST(AttentionShape, HopperBackwardReproducesTheCudnnFigures) {
  ComputeModel cm = h100_at_burst();
  const double d128[] = {408, 465, 499, 518, 516};
  for (int i = 0; i < 5; ++i) {
    AttentionShape a = figure_shape(kSeq[i], 128, false);
    EXPECT_NEAR(figure_tflops(cm.fused_attention_backward(a), a, false) / d128[i], 1.0, 0.04) << kSeq[i];
  }
  AttentionShape a = figure_shape(2048, 64, false);
  EXPECT_NEAR(figure_tflops(cm.fused_attention_backward(a), a, false) / 395, 1.0, 0.04);
}

TEST(AttentionShape, ShortSequencesAndNarrowHeadsRunSlowerCausalBelowNonCausal) {
  ComputeModel cm = h100_at_burst();
  auto rate = [&](double seq, double d, bool causal) {
    AttentionShape a = figure_shape(seq, d, causal);
    auto e = cm.fused_attention_forward(a);
    return e.flops / e.seconds;
  };
  EXPECT_LT(rate(1024, 128, true), rate(4096, 128, true));
  EXPECT_LT(rate(4096, 128, true), rate(16384, 128, true));
  EXPECT_LT(rate(4096, 64, true), rate(4096, 128, true));
  EXPECT_LT(rate(4096, 128, true), rate(4096, 128, false));
  // Never above the device peak.
  EXPECT_LT(rate(16384, 256, false), 989e12);
}

TEST(AttentionShape, HeadWidthTableInterpolatesInLog2AndHoldsBeyondItsEnds) {
  auto p = profile("h100-sxm5-80gb.yaml").attention;
  EXPECT_DOUBLE_EQ(p.head_dim_scale(true, 128), 1.0);
  EXPECT_DOUBLE_EQ(p.head_dim_scale(true, 64), 0.70);
  EXPECT_DOUBLE_EQ(p.head_dim_scale(true, 32), 0.70);                       // held below the table
  EXPECT_DOUBLE_EQ(p.head_dim_scale(false, 256), 1.0);                      // held above the backward table
  EXPECT_NEAR(p.head_dim_scale(true, std::sqrt(64.0 * 128)), 0.85, 1e-12);  // halfway in log2
  // MLA's 192-wide query-key heads between 128 and 256.
  EXPECT_GT(p.head_dim_scale(true, 192), 0.95);
  EXPECT_LT(p.head_dim_scale(true, 192), 1.0);
}

TEST(AttentionShape, ProfilesWithoutShapeTermsKeepOneEfficiencyForEveryShape) {
  auto a100 = profile("a100-sxm4-80gb.yaml");
  ComputeModel cm(a100, {312e12, 2039e9, 108, 2});
  for (double seq : {1024.0, 8192.0}) {
    AttentionShape a{32, seq, seq, 128, 0, 2, true};
    auto e = cm.fused_attention_forward(a);
    double compute = e.flops / (312e12 * a100.clock_sustain_factor * a100.attention.forward_efficiency);
    EXPECT_NEAR(e.seconds,
                std::max(compute, e.bytes / cm.achieved_memory_bandwidth()) + a100.kernel_overhead_s, 1e-12)
        << seq;
  }
}

TEST(AttentionShape, BadShapeTermsNameTheKey) {
  auto write = [](const std::string& attention) {
    auto path = std::filesystem::path(::testing::TempDir()) / "attention-shape.yaml";
    std::ofstream(path) << "device: X\nmemory: {bandwidth_efficiency: 0.8}\ngemm: {tiles: [[128, "
                           "128]]}\nattention: {kernel: K, forward_efficiency: "
                           "0.6, backward_efficiency: 0.5, "
                        << attention << "}\nprovenance: [{kind: prior, source: test}]\n";
    return path.string();
  };
  auto error = [&](const std::string& attention) {
    return podsim::testing::error_of([&] { calibration::load_device_profile(write(attention)); });
  };
  std::string m = error("causal_efficiency: 1.5");
  EXPECT_NE(m.find("causal_efficiency"), std::string::npos) << m;
  m = error("block_overhead: {forward: -1}");
  EXPECT_NE(m.find("forward"), std::string::npos) << m;
  m = error("block_overhead: {sideways: 1}");
  EXPECT_NE(m.find("sideways"), std::string::npos) << m;
  m = error("head_dim_efficiency: {forward: {wide: 1}}");
  EXPECT_NE(m.find("head width"), std::string::npos) << m;
  m = error("head_dim_efficiency: {forward: {64: 3}}");
  EXPECT_NE(m.find("between 0 and 2"), std::string::npos) << m;
  EXPECT_TRUE(error("causal_efficiency: 0.9, block_overhead: {forward: 1}").empty());
}
