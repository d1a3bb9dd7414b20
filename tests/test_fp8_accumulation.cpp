// Transformer Engine's fp8 GEMMs accumulate fast in the forward and with the split fp32 accumulator in the
// backward (dgrad, wgrad); on Hopper the split one costs the profile's gemm.split_accumulator_efficiency,
// on Blackwell nothing (gemm_accumulation.hpp, device_profile.hpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "podsim/calibration/compute_model.hpp"
#include "podsim/driver/simulation.hpp"
#include "podsim/workload/workload_model.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::workload;
using calibration::ComputeModel;

namespace {

calibration::DeviceProfile profile(const std::string& name) {
  return calibration::load_device_profile(podsim::testing::source_path("calibration/profiles/" + name));
}

calibration::DeviceRates rates(const std::string& format, double peak, double bytes, int sms = 132) {
  calibration::DeviceRates r{peak, 3350e9, sms, bytes};
  r.format = format;
  r.attention_peak_flops = peak / (2 / bytes);
  return r;
}

Overrides small(const std::string& precision, const std::string& fast) {
  return {{"model.layers", "2"},          {"parallel.tp", "1"},
          {"parallel.pp", "1"},           {"parallel.dp", "1"},
          {"parallel.cp", "1"},           {"parallel.zero", "0"},
          {"parallel.schedule", "1f1b"},  {"training.global_batch", "1"},
          {"training.micro_batch", "1"},  {"training.precision", precision},
          {"training.recompute", "none"}, {"training.fp8_fast_accumulation", fast}};
}

report::RunResult run(const std::string& topology, const std::string& workload, const std::string& precision,
                      const std::string& fast) {
  auto topo = podsim::testing::preset(topology, {{"nodes", "1"}});
  auto model = load_workload_model(podsim::testing::source_path("workloads/" + workload + ".yaml"),
                                   small(precision, fast), topo);
  return driver::simulate(topo, *model);
}

StepPlan describe(const std::string& topology, const std::string& workload, const std::string& precision,
                  const std::string& fast) {
  return run(topology, workload, precision, fast).plan;
}

double seconds(const StepPlan& plan, const std::string& group, const std::string& name) {
  for (const auto& k : plan.kernels)
    if (k.group == group && k.name == name) return k.seconds;
  ADD_FAILURE() << "no kernel " << group << " / " << name;
  return 0;
}

}  // namespace

TEST(Fp8Accumulation, SplitAccumulatorScalesTheMainLoopOfHopperFp8Only) {
  auto h100 = profile("h100-sxm5-80gb.yaml");
  EXPECT_DOUBLE_EQ(h100.gemm.split_accumulator_scale("fp8"), 0.87);
  EXPECT_DOUBLE_EQ(h100.gemm.split_accumulator_scale("bf16"), 1.0);
  EXPECT_DOUBLE_EQ(profile("h200-sxm-141gb.yaml").gemm.split_accumulator_scale("fp8"), 0.87);
  // Blackwell's tensor cores accumulate in full fp32: no split mode, no cost.
  EXPECT_DOUBLE_EQ(profile("b200-sxm-180gb.yaml").gemm.split_accumulator_scale("fp8"), 1.0);

  calibration::GemmShape big{16384, 16384, 16384};
  ComputeModel fp8(h100, rates("fp8", 1979e12, 1));
  ComputeModel split = fp8.with_split_accumulator();
  EXPECT_TRUE(split.split_accumulator());
  // A large GEMM is main-loop bound: its time grows by 1 / 0.87, less the fixed per-wave and launch terms.
  double ratio = split.gemm(big).seconds / fp8.gemm(big).seconds;
  EXPECT_GT(ratio, 1.10);
  EXPECT_LE(ratio, 1 / 0.87 + 1e-12);
  // bf16 has no fast-accumulation mode; the 16-bit model of a split fp8 model is plain 16-bit again.
  ComputeModel bf16(h100, rates("bf16", 989e12, 2));
  EXPECT_DOUBLE_EQ(bf16.with_split_accumulator().gemm(big).seconds, bf16.gemm(big).seconds);
  EXPECT_DOUBLE_EQ(split.sixteen_bit().gemm(big).seconds, fp8.sixteen_bit().gemm(big).seconds);
  // The SMs a userbuffers kernel leaves keep the accumulator.
  EXPECT_TRUE(split.without_sms(16).split_accumulator());
  EXPECT_GT(split.without_sms(16).gemm(big).seconds, fp8.without_sms(16).gemm(big).seconds);
  // Never faster than the datasheet peak.
  EXPECT_GE(split.gemm(big).seconds, 2.0 * 16384.0 * 16384 * 16384 / 1979e12);
}

TEST(Fp8Accumulation, BackwardGemmsOfTransformerEngineAccumulateSplitOnHopper) {
  StepPlan te = describe("dgx-h100-superpod", "llama3-8b", "fp8", "fprop");
  StepPlan fast = describe("dgx-h100-superpod", "llama3-8b", "fp8", "all");
  StepPlan none = describe("dgx-h100-superpod", "llama3-8b", "fp8", "none");
  for (const char* k : {"QKV projection", "MLP fc1", "MLP fc2", "attention output projection"}) {
    EXPECT_DOUBLE_EQ(seconds(te, "layer forward", k), seconds(fast, "layer forward", k)) << k;
    EXPECT_GT(seconds(none, "layer forward", k), seconds(te, "layer forward", k)) << k;
  }
  for (const char* k : {"QKV dgrad", "QKV wgrad", "MLP fc1 dgrad", "MLP fc1 wgrad", "MLP fc2 dgrad",
                        "MLP fc2 wgrad", "output projection dgrad", "output projection wgrad"}) {
    double split = seconds(te, "layer backward", k), quick = seconds(fast, "layer backward", k);
    EXPECT_GT(split, 1.08 * quick) << k;
    EXPECT_LE(split, quick / 0.87 + 1e-12) << k;
    EXPECT_DOUBLE_EQ(seconds(none, "layer backward", k), split) << k;
  }
  // Kernels that are not Transformer Engine fp8 GEMMs do not change: the attention kernel, the bf16
  // logits of the output layer, the element-wise kernels.
  for (auto [group, k] :
       {std::pair{"layer backward", "flash attention backward"},
        std::pair{"output layer backward", "logits dgrad"}, std::pair{"layer backward", "SwiGLU backward"}})
    EXPECT_DOUBLE_EQ(seconds(te, group, k), seconds(fast, group, k)) << k;
  EXPECT_GT(run("dgx-h100-superpod", "llama3-8b", "fp8", "fprop").step_time(),
            run("dgx-h100-superpod", "llama3-8b", "fp8", "all").step_time());
}

TEST(Fp8Accumulation, NothingChangesWhereThereIsNoSplitMode) {
  // bf16 on Hopper, fp8 on Blackwell: the setting has no effect.
  for (auto [topology, precision] :
       {std::pair{"dgx-h100-superpod", "bf16"}, std::pair{"dgx-b200-superpod", "fp8"}}) {
    double te = run(topology, "llama3-8b", precision, "fprop").step_time();
    EXPECT_DOUBLE_EQ(te, run(topology, "llama3-8b", precision, "all").step_time()) << topology << precision;
    EXPECT_DOUBLE_EQ(te, run(topology, "llama3-8b", precision, "none").step_time()) << topology << precision;
  }
}

TEST(Fp8Accumulation, MoeGroupedGemmsAccumulateAsTheDenseOnes) {
  auto plan = [](const std::string& fast) {
    auto topo = podsim::testing::preset("dgx-h100-superpod", {{"nodes", "1"}});
    Overrides o = small("fp8", fast);
    o.insert(o.end(), {{"parallel.dp", "8"}, {"parallel.ep", "8"}, {"training.global_batch", "8"}});
    auto model = load_workload_model(podsim::testing::source_path("workloads/mixtral-8x7b.yaml"), o, topo);
    return driver::simulate(topo, *model).plan;
  };
  StepPlan te = plan("fprop"), fast = plan("all");
  EXPECT_DOUBLE_EQ(seconds(te, "MoE layer forward", "MoE grouped fc1"),
                   seconds(fast, "MoE layer forward", "MoE grouped fc1"));
  EXPECT_GT(seconds(te, "MoE layer backward", "MoE grouped fc1 dgrad/wgrad"),
            1.05 * seconds(fast, "MoE layer backward", "MoE grouped fc1 dgrad/wgrad"));
}

TEST(Fp8Accumulation, BadInputNamesTheKeyAndTheValidValues) {
  auto topo = podsim::testing::preset("dgx-h100-superpod", {{"nodes", "1"}});
  std::string m = podsim::testing::error_of([&] {
    load_workload_model(podsim::testing::source_path("workloads/llama3-8b.yaml"), small("fp8", "sometimes"),
                        topo);
  });
  EXPECT_NE(m.find("fp8_fast_accumulation"), std::string::npos) << m;
  EXPECT_NE(m.find("fprop"), std::string::npos) << m;
  auto path = std::filesystem::path(::testing::TempDir()) / "bad-split.yaml";
  std::ofstream(path) << "device: X\ngemm: {tiles: [[128, 128]], split_accumulator_efficiency: {fp8: 1.4}}\n"
                         "provenance: [{kind: prior, source: test}]\n";
  m = podsim::testing::error_of([&] { calibration::load_device_profile(path.string()); });
  EXPECT_NE(m.find("split_accumulator_efficiency"), std::string::npos) << m;
}
