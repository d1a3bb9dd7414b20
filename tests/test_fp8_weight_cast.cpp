// Under the fp8 formats each stage recasts its transformer layers' weights to fp8 once per step (the
// first microbatch; Transformer Engine caches the copy for the others): 4 bytes per weight (read bf16,
// write fp8 and its transpose), one kernel per linear; nothing under bf16.
#include <gtest/gtest.h>

#include "podsim/calibration/compute_model.hpp"
#include "podsim/workload/transformer/fp8_weight_ops.hpp"
#include "podsim/workload/transformer/transformer_loader.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::workload;

namespace {

WorkloadConfig llama(const std::string& precision, const std::string& tp) {
  auto topo = podsim::testing::preset("dgx-h100-superpod", {{"nodes", "1"}});
  Overrides o = {{"model.layers", "2"},         {"parallel.tp", tp},
                 {"parallel.pp", "1"},          {"parallel.dp", "1"},
                 {"parallel.zero", "0"},        {"training.global_batch", "1"},
                 {"training.micro_batch", "1"}, {"training.precision", precision},
                 {"training.recompute", "none"}};
  return load_workload(podsim::testing::source_path("workloads/llama3-8b.yaml"), o, topo);
}

calibration::ComputeModel h100() {
  auto p = calibration::load_device_profile(
      podsim::testing::source_path("calibration/profiles/h100-sxm5-80gb.yaml"));
  return calibration::ComputeModel(p, {1979e12, 3350e9, 132, 1, "fp8"});
}

}  // namespace

TEST(Fp8WeightCast, OncePerStepFourBytesPerWeight) {
  auto cm = h100();
  // Llama 3 8B layer: QKV 4096 x (32 + 2 x 8) x 128, projection 4096^2, SwiGLU 3 x 4096 x 14336, two
  // RMSNorm scales of 4096.
  double layer = 4096.0 * 48 * 128 + 4096.0 * 4096 + 3 * 4096.0 * 14336 + 2 * 4096;
  double expected = 2 * 4 * cm.memory_op(layer * 4 / 4);
  EXPECT_NEAR(fp8_weight_cast_seconds(llama("fp8", "1"), 0, cm), expected, 1e-12);
  // tp splits every linear's weight
  EXPECT_NEAR(fp8_weight_cast_seconds(llama("fp8", "2"), 0, cm), 2 * 4 * cm.memory_op(layer / 2), 1e-12);
  EXPECT_DOUBLE_EQ(fp8_weight_cast_seconds(llama("bf16", "1"), 0, cm), 0);
}
