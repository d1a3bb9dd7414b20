// The optimizer's state: main weights (fp32, fp32 remainders, fp16, none) and Adam's moments in the
// precisions Megatron-Core's precision-aware optimizer and Apex's DistributedFusedAdam keep them, in the
// memory model, the optimizer step and the Megatron-LM import.
#include <gtest/gtest.h>

#include <algorithm>

#include "podsim/calibration/compute_model.hpp"
#include "podsim/core/error.hpp"
#include "podsim/driver/megatron_args.hpp"
#include "podsim/workload/pipeline_schedule.hpp"
#include "podsim/workload/transformer/megatron_builder.hpp"
#include "podsim/workload/transformer/memory_model.hpp"
#include "podsim/workload/transformer/optimizer_state.hpp"
#include "podsim/workload/transformer/transformer_loader.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::workload;
using podsim::testing::error_of;

namespace {

WorkloadConfig llama(const topology::Topology& topo, Overrides sets = {}) {
  sets.insert(sets.begin(), {{"parallel.zero", "1"}, {"parallel.dp", "8"}});
  return load_workload(podsim::testing::source_path("workloads/llama3-70b.yaml"), sets, topo);
}

double optimizer_bytes_of_stage(const topology::Topology& topo, const WorkloadConfig& w, int stage) {
  auto programs = build_schedule(w.parallel.schedule, w.parallel.pp, 64, w.parallel.virtual_stages);
  auto mem = stage_memory(w, 1, w.parallel.virtual_stages, peak_in_flight(programs), topo.device_profile);
  return mem[stage].optimizer;
}

calibration::ComputeModel h100() {
  auto topo = podsim::testing::preset("dgx-h100-superpod");
  return calibration::ComputeModel(topo.device_profile, device_rates(topo.device, topology::Precision::bf16));
}

double op_bytes(const PassCost& p, const std::string& name) {
  for (const auto& op : p.ops)
    if (name == op.name) return op.bytes;
  return -1;  // no such kernel
}

bool has_set(const driver::JobImport& imp, const std::string& s) {
  return std::find(imp.sets.begin(), imp.sets.end(), s) != imp.sets.end();
}

}  // namespace

// Per parameter, sharded over the distributed optimizer's ranks: 4 + 4 + 4 by default, 2 for remainders,
// 0 without a main copy, 2 / 1 per bf16 / fp8 moment.
TEST(OptimizerState, MemoryFollowsTheStatesPrecisions) {
  auto topo = podsim::testing::preset("dgx-h100-superpod", {{"nodes", "32"}});
  auto base = llama(topo);
  double per_param = optimizer_bytes_of_stage(topo, base, 1) / 12;  // sharded parameters of stage 1
  EXPECT_DOUBLE_EQ(per_param, stage_params(base, 1) / 8);
  struct Case {
    Overrides sets;
    double bytes;
  } cases[] = {
      {{{"training.main_params", "fp32_remainders"}}, 2 + 4 + 4},
      {{{"training.main_params", "fp16"}}, 2 + 4 + 4},
      {{{"training.main_params", "none"},
        {"training.exp_avg_precision", "bf16"},
        {"training.exp_avg_sq_precision", "bf16"}},
       0 + 2 + 2},
      {{{"training.exp_avg_precision", "fp8"}, {"training.exp_avg_sq_precision", "bf16"}}, 4 + 1 + 2},
  };
  for (const auto& c : cases) {
    auto w = llama(topo, c.sets);
    EXPECT_DOUBLE_EQ(optimizer_bytes_of_stage(topo, w, 1), per_param * c.bytes) << c.sets.front().first;
  }
  // A checkpoint holds the same state beside the bf16 weights: 2 + 4 instead of 2 + 12 bytes per parameter.
  auto lean = llama(topo, {{"training.main_params", "none"},
                           {"training.exp_avg_precision", "bf16"},
                           {"training.exp_avg_sq_precision", "bf16"}});
  EXPECT_DOUBLE_EQ(build_megatron_step(topo, lean, 1, 1).model_state_bytes * 14,
                   build_megatron_step(topo, base, 1, 1).model_state_bytes * 6);
  // fp32 training: the weights are the main copy.
  auto fp32 = podsim::testing::preset("dgx-a100-superpod");
  auto w32 = load_workload(podsim::testing::source_path("workloads/gpt3-175b.yaml"),
                           {{"training.precision", "fp32"}}, fp32);
  EXPECT_EQ(w32.training.optimizer.main_params, MainParams::none);
  EXPECT_DOUBLE_EQ(optimizer_state_bytes(w32.training.optimizer), 8);
}

TEST(OptimizerState, ImpossibleMainCopiesAreInputErrors) {
  auto a100 = podsim::testing::preset("dgx-a100-superpod");
  auto load = [&](Overrides sets) {
    return error_of(
        [&] { load_workload(podsim::testing::source_path("workloads/gpt3-175b.yaml"), sets, a100); });
  };
  std::string e = load({{"training.precision", "fp32"}, {"training.main_params", "fp32"}});
  EXPECT_NE(e.find("main_params"), std::string::npos) << e;
  EXPECT_NE(e.find("none"), std::string::npos) << e;
  e = load({{"training.precision", "fp16"}, {"training.main_params", "fp32_remainders"}});
  EXPECT_NE(e.find("bf16 weights"), std::string::npos) << e;
  e = load({{"training.main_params", "fp64"}});
  EXPECT_NE(e.find("fp32_remainders"), std::string::npos) << e;  // lists the valid values
  e = load({{"training.exp_avg_sq_precision", "int4"}});
  EXPECT_NE(e.find("exp_avg_sq_precision"), std::string::npos) << e;
  EXPECT_TRUE(load({{"training.precision", "fp16"}, {"training.main_params", "fp16"}}).empty());
}

// The step's HBM bytes against the closed form: 14 for the gradients, Adam's read of the fp32 gradient and
// read + write of main weights and moments, and the copy into the 16-bit weights only for a separate copy.
TEST(OptimizerState, StepMovesWhatTheStateHolds) {
  auto cm = h100();
  double n = 1e9;
  auto fp32 = optimizer_cost(n, OptimizerState{}, 2, cm);
  EXPECT_DOUBLE_EQ(op_bytes(fp32, "optimizer: Adam update"), n * 28);
  EXPECT_DOUBLE_EQ(op_bytes(fp32, "optimizer: copy master weights"), n * 6);
  OptimizerState rem{.main_params = MainParams::fp32_remainders, .exp_avg_bytes = 4, .exp_avg_sq_bytes = 4};
  auto r = optimizer_cost(n, rem, 2, cm);
  EXPECT_DOUBLE_EQ(op_bytes(r, "optimizer: Adam update"), n * 28);  // bf16 high half + remainder, each way
  EXPECT_DOUBLE_EQ(op_bytes(r, "optimizer: copy master weights"), -1);
  EXPECT_LT(r.seconds, fp32.seconds);
  OptimizerState apex{.main_params = MainParams::none, .exp_avg_bytes = 2, .exp_avg_sq_bytes = 2};
  auto a = optimizer_cost(n, apex, 2, cm);
  EXPECT_DOUBLE_EQ(op_bytes(a, "optimizer: Adam update"), n * (4 + 2 * (2 + 2 + 2)));
  EXPECT_LT(a.seconds, r.seconds);
}

TEST(OptimizerState, MegatronPrecisionAwareOptimizer) {
  auto sets = [](const std::string& args) { return driver::parse_megatron_args(args, "cmd"); };
  auto bf16 = sets("--bf16 --use-precision-aware-optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype fp8");
  for (const char* s :
       {"workload.training.main_params=fp32_remainders", "workload.training.exp_avg_precision=bf16",
        "workload.training.exp_avg_sq_precision=fp8"})
    EXPECT_TRUE(has_set(bf16, s)) << s;
  // Current scaling: Megatron-Core keeps the fp32 main weights itself.
  auto cs = sets("--bf16 --fp8-format hybrid --fp8-recipe tensorwise --use-precision-aware-optimizer");
  EXPECT_TRUE(has_set(cs, "workload.training.main_params=fp32"));
  EXPECT_TRUE(has_set(sets("--bf16 --fp8-format hybrid --fp8-recipe delayed --use-precision-aware-optimizer"),
                      "workload.training.main_params=fp32_remainders"));
  EXPECT_TRUE(has_set(sets("--fp16 --use-precision-aware-optimizer --main-params-dtype fp16"),
                      "workload.training.main_params=fp16"));
  auto without = sets("--bf16 --exp-avg-dtype bf16");
  EXPECT_TRUE(std::none_of(without.sets.begin(), without.sets.end(),
                           [](const std::string& s) { return s.find("exp_avg") != std::string::npos; }));
  bool noted = std::any_of(without.notes.begin(), without.notes.end(),
                           [](const std::string& n) { return n.find("do nothing") != std::string::npos; });
  EXPECT_TRUE(noted);
  std::string e = error_of([&] { sets("--use-precision-aware-optimizer --exp-avg-dtype int8"); });
  EXPECT_NE(e.find("exp-avg-dtype"), std::string::npos) << e;
}
