// The B200 compute profile reproduces the published Blackwell measurements its provenance cites
// (calibration/profiles/b200-sxm-180gb.yaml): GEMM throughput from OpenXLA's measured sm_100 matmul table,
// cross-checked against the same table's H100 entry; its attention releases (cuDNN, FlashAttention-4).
// The B300 profile against Transformer Engine's measured GEMM guide (validation/te-gemm-profiling.csv).
#include <gtest/gtest.h>

#include "podsim/calibration/compute_model.hpp"
#include "podsim/core/csv_table.hpp"
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

namespace {

// The twelve GEMMs of one layer of Transformer Engine's GEMM profiling guide
// (validation/te-gemm-profiling.csv): M tokens, hidden h, intermediate f; fprop M x K x N, dgrad with K and N
// swapped, wgrad K x M x N.
double te_guide_layer_seconds(const calibration::DeviceProfile& p, const calibration::DeviceRates& rates) {
  ComputeModel cm(p, rates);
  const double M = 15872, h = 4096, f = 16384;
  const double linears[4][2] = {{h, 3 * h}, {h, h}, {h, f}, {f, h}};  // K, N of each fprop
  double seconds = 0;
  for (const auto& [K, N] : linears)
    seconds += cm.gemm({M, N, K}).seconds + cm.gemm({M, K, N}).seconds + cm.gemm({K, N, M}).seconds;
  return seconds;
}

// Published per-layer sum (fprop + dgrad + wgrad) of one precision, in seconds.
double te_guide_measured_seconds(const std::string& precision) {
  auto table = read_csv(podsim::testing::source_path("validation/te-gemm-profiling.csv"));
  double ms = 0;
  for (size_t i = 0; i < table.rows.size(); ++i)
    if (table.text(i, "precision") == precision) ms += table.number(i, "time_ms");
  return ms * 1e-3;
}

calibration::DeviceRates b300(double peak, double bytes, const char* format) {
  return {peak, 8000e9, 160, bytes, format};  // topologies/dgx-b300-superpod.yaml
}

}  // namespace

TEST(BlackwellCalibration, B300GemmsReproduceTransformerEnginesGuide) {
  auto p = calibration::load_device_profile(
      podsim::testing::source_path("calibration/profiles/b300-sxm-288gb.yaml"));
  auto burst = p, sustained = p;
  burst.clock_sustain_factor = 1.0;
  // bf16 and per-tensor fp8 (the B200's derived main loop): the measured layer lies between podsim's
  // burst-clock and sustained-clock figures (the benchmark's clock after its warm-up is neither).
  for (auto [precision, rates] :
       {std::pair{"BF16", b300(2250e12, 2, "bf16")}, std::pair{"FP8Current", b300(4500e12, 1, "fp8")}}) {
    double measured = te_guide_measured_seconds(precision);
    EXPECT_GT(measured, te_guide_layer_seconds(burst, rates)) << precision;
    EXPECT_LT(measured, te_guide_layer_seconds(sustained, rates)) << precision;
  }
  // The block-scaled formats' format_efficiency reproduces their measured time relative to fp8's.
  double fp8 = te_guide_layer_seconds(burst, b300(4500e12, 1, "fp8"));
  double fp8_measured = te_guide_measured_seconds("FP8Current");
  EXPECT_NEAR(te_guide_layer_seconds(burst, b300(4500e12, 1, "mxfp8")) / fp8,
              te_guide_measured_seconds("MXFP8") / fp8_measured, 0.005);
  EXPECT_NEAR(te_guide_layer_seconds(burst, b300(14000e12, 0.5, "nvfp4")) / fp8,
              te_guide_measured_seconds("NVFP4") / fp8_measured, 0.005);
}
