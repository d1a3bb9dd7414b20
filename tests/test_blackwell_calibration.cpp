// The B200 compute profile reproduces the published Blackwell measurements its provenance cites
// (calibration/profiles/b200-sxm-180gb.yaml): GEMM throughput from OpenXLA's measured sm_100 matmul table,
// cross-checked against the same table's H100 entry; its attention releases (cuDNN, FlashAttention-4).
#include <gtest/gtest.h>

#include "podsim/calibration/compute_model.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using calibration::ComputeModel;

namespace {

calibration::DeviceProfile burst_profile(const char* file) {
  auto p = calibration::load_device_profile(podsim::testing::source_path(file));
  p.clock_sustain_factor = 1.0;  // the cited figures are burst measurements
  return p;
}

calibration::DeviceRates b200(double peak, double bytes, const char* format) {
  return {peak, 7700e9, 148, bytes, format};
}

}  // namespace

TEST(BlackwellCalibration, B200GemmReproducesTheXlaSm100Table) {
  auto p = burst_profile("calibration/profiles/b200-sxm-180gb.yaml");
  const calibration::GemmShape cube{4096, 4096, 4096};
  // OpenXLA matmul_interpolator_data.h, sm_100, 4096^3: bf16 1416.9 TFLOP/s, fp8 e4m3 2765.0 TFLOP/s.
  EXPECT_NEAR(ComputeModel(p, b200(2250e12, 2, "bf16")).gemm(cube).tflops(), 1416.9, 10.0);
  EXPECT_NEAR(calibration::fit_mainloop_efficiency(p, b200(2250e12, 2, "bf16"), cube, 1416.9e12),
              p.gemm.mainloop_efficiency, 0.005);
  // fp8 at format_efficiency 1.0 (the cap): below the measured 2765, within 15%.
  double fp8 = ComputeModel(p, b200(4500e12, 1, "fp8")).gemm(cube).tflops();
  EXPECT_LT(fp8, 2765.0);
  EXPECT_GT(fp8, 0.85 * 2765.0);
  // Blackwell reaches a smaller fraction of its (doubled) peak than Hopper at the same shape.
  auto h100 = burst_profile("calibration/profiles/h100-sxm5-80gb.yaml");
  EXPECT_LT(p.gemm.mainloop_efficiency, h100.gemm.mainloop_efficiency);
}

TEST(BlackwellCalibration, TheXlaTableAgreesWithTheH100Calibration) {
  // The same table's sm_90 entry (783-786 TFLOP/s bf16 at 4096^3) against the H100 profile, which was
  // calibrated from a different source (MAMF): one harness, so the sm_100 figures can be trusted alike.
  auto h100 = burst_profile("calibration/profiles/h100-sxm5-80gb.yaml");
  EXPECT_NEAR(ComputeModel(h100, {989e12, 3350e9, 132, 2, "bf16"}).gemm({4096, 4096, 4096}).tflops(), 786.0,
              0.01 * 786.0);
}

TEST(BlackwellCalibration, B200AttentionIsCudnnWithFlashAttention4AsAWhatIf) {
  auto p = burst_profile("calibration/profiles/b200-sxm-180gb.yaml");
  // Transformer Engine runs cuDNN's fused attention on Blackwell; the numbers of its 9.19 release
  // (validation/cudnn-attention.csv, tests/test_attention_shape.cpp checks the figures).
  EXPECT_EQ(p.attention.kernel, "cuDNN fused attention");
  EXPECT_EQ(p.attention.library, "cudnn-9.19");
  auto fa4 = calibration::with_attention_library(p, "flash-attention-4").attention;
  EXPECT_EQ(fa4.kernel, "FlashAttention-4");
  // FlashAttention-4 (arXiv:2603.05451): bf16 forward up to 1613 TFLOP/s on B200 (71% of 2250).
  EXPECT_NEAR(fa4.forward_efficiency * 2250, 1613, 20);
  // Backward: the Hopper backward/forward ratio (FlashAttention-3: 0.55 / 0.75), derived.
  EXPECT_NEAR(fa4.backward_efficiency, 0.71 * 0.55 / 0.75, 0.005);
  EXPECT_LT(fa4.backward_efficiency, fa4.forward_efficiency);
}
