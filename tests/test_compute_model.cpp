// The GEMM/roofline model and its calibration.
#include <gtest/gtest.h>

#include "podsim/calibration/compute_model.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using calibration::ComputeModel;
using calibration::GemmShape;

namespace {

calibration::DeviceRates a100_rates() {
  return {312e12, 2039e9, 108, 2};
}

calibration::DeviceProfile a100_profile() {
  return calibration::load_device_profile(
      podsim::testing::source_path("calibration/profiles/a100-sxm4-80gb.yaml"));
}

}  // namespace

TEST(ComputeModel, ProfileReproducesThePublishedCalibrationPoint) {
  // The profile's provenance says its main-loop efficiency reproduces MAMF 267.9 TFLOP/s at
  // 6912x16384x2048 (a burst measurement, i.e. at boost clock).
  auto profile = a100_profile();
  profile.clock_sustain_factor = 1.0;
  auto e = ComputeModel(profile, a100_rates()).gemm({6912, 16384, 2048});
  EXPECT_NEAR(e.tflops(), 267.9, 1.0);
  double fitted = calibration::fit_mainloop_efficiency(profile, a100_rates(), {6912, 16384, 2048}, 267.9e12);
  EXPECT_NEAR(fitted, profile.gemm.mainloop_efficiency, 0.005);
  // H100 SXM: MAMF 792.1 TFLOP/s at 6144x17920x2816 (same source).
  auto h100 = calibration::load_device_profile(
      podsim::testing::source_path("calibration/profiles/h100-sxm5-80gb.yaml"));
  h100.clock_sustain_factor = 1.0;
  EXPECT_NEAR(ComputeModel(h100, {989e12, 3350e9, 132, 2}).gemm({6144, 17920, 2816}).tflops(), 792.1, 2.0);
}

TEST(ComputeModel, WaveQuantizationMakesOneTileTooManyExpensive) {
  ComputeModel cm(a100_profile(), a100_rates());
  // 108 tiles of 256x128 fill one wave; one more row of tiles needs a second wave.
  auto full = cm.gemm({256 * 9, 128 * 12, 4096});
  auto spill = cm.gemm({256 * 9 + 64, 128 * 12, 4096});
  EXPECT_GT(spill.seconds / full.seconds, 1.08);
  EXPECT_LT(spill.tflops(), full.tflops());
}

TEST(ComputeModel, SmallAndSkinnyGemmsAreLessEfficientThanLargeOnes) {
  ComputeModel cm(a100_profile(), a100_rates());
  double big = cm.gemm({8192, 8192, 8192}).tflops();
  double small = cm.gemm({256, 256, 256}).tflops();
  double skinny = cm.gemm({16, 12288, 12288}).tflops();
  EXPECT_GT(big, 200);
  EXPECT_LT(big, 312);
  EXPECT_LT(small, big / 4);
  EXPECT_LT(skinny, big / 2);
  EXPECT_TRUE(cm.gemm({16, 12288, 12288}).memory_bound);
}

TEST(ComputeModel, MemoryOpsRunAtAchievedBandwidth) {
  auto profile = a100_profile();
  ComputeModel cm(profile, a100_rates());
  double t = cm.memory_op(1e9);
  EXPECT_NEAR(t, 1e9 / (2039e9 * profile.memory_efficiency) + profile.kernel_overhead_s, 1e-12);
  EXPECT_EQ(cm.memory_op(0), 0);
}

TEST(ComputeModel, MemoizedGemmsMatchTheTimedOnesInEveryVariant) {
  // The plan search's memo is shared by a model's variants, which differ in SMs, format and accumulator:
  // each must get its own answer, the same as without the memo, asked in any order and twice.
  auto h100 = calibration::load_device_profile(
      podsim::testing::source_path("calibration/profiles/h100-sxm5-80gb.yaml"));
  calibration::DeviceRates fp8{1979e12, 3350e9, 132, 1, "fp8", 989e12};
  ComputeModel plain(h100, fp8);
  ComputeModel memo = plain.with_gemm_memo();
  auto variants = [](const ComputeModel& m) {
    return std::vector<ComputeModel>{m,
                                     m.sixteen_bit(),
                                     m.without_sms(24),
                                     m.with_split_accumulator(),
                                     m.with_split_accumulator().without_sms(4),
                                     m.with_split_accumulator().sixteen_bit()};
  };
  auto plain_variants = variants(plain), memo_variants = variants(memo);
  std::vector<GemmShape> shapes{{4096, 4096, 4096},    {8192, 1024, 4096}, {128, 14336, 4096},
                                {4096, 4096, 4096, 8}, {64, 64, 64},       {16384, 128, 7168}};
  for (int pass = 0; pass < 2; ++pass)
    for (size_t v = 0; v < plain_variants.size(); ++v)
      for (const auto& s : shapes) {
        auto want = plain_variants[v].gemm(s), got = memo_variants[v].gemm(s);
        EXPECT_EQ(got.seconds, want.seconds)
            << "variant " << v << " shape " << s.m << "x" << s.n << "x" << s.k;
        EXPECT_EQ(got.split_k, want.split_k);
        EXPECT_EQ(got.tile.m, want.tile.m);
        EXPECT_EQ(got.memory_bound, want.memory_bound);
      }
  // The variants really differ, so a memo keyed too coarsely would have failed above.
  EXPECT_NE(plain_variants[0].gemm(shapes[0]).seconds, plain_variants[1].gemm(shapes[0]).seconds);
  EXPECT_NE(plain_variants[0].gemm(shapes[0]).seconds, plain_variants[2].gemm(shapes[0]).seconds);
  EXPECT_NE(plain_variants[0].gemm(shapes[0]).seconds, plain_variants[3].gemm(shapes[0]).seconds);
}
