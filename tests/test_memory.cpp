// Memory accounting per device.
#include <gtest/gtest.h>

#include "podsim/cli/simulation.hpp"
#include "podsim/core/error.hpp"
#include "podsim/workload/megatron_builder.hpp"
#include "podsim/workload/memory_model.hpp"
#include "podsim/workload/pipeline_schedule.hpp"
#include "podsim/workload/transformer_math.hpp"
#include "podsim/workload/workload_loader.hpp"
#include "podsim/workload/workload_model.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::workload;

namespace {

WorkloadConfig gpt3(const topology::Topology& topo, Overrides sets = {}) {
  return load_workload(podsim::testing::source_path("workloads/gpt3-175b.yaml"), sets, topo);
}

}  // namespace

TEST(Memory, ActivationsFollowKorthikantiTable2) {
  auto topo = podsim::testing::preset("dgx-a100-superpod");
  auto w = gpt3(topo, {{"parallel.tp", "8"}});
  double s = 2048, b = 1, h = 12288, a = 96, t = 8;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(w, 1, Recompute::none),
                   s * b * h * (10 + 24 / t + 5 * a * s / (h * t)));
  EXPECT_DOUBLE_EQ(layer_activation_bytes(w, 1, Recompute::selective), s * b * h * (10 + 24 / t));
  EXPECT_DOUBLE_EQ(layer_activation_bytes(w, 1, Recompute::full), 2 * s * b * h);
  auto sp = gpt3(topo, {{"parallel.sequence_parallel", "true"}});
  EXPECT_DOUBLE_EQ(layer_activation_bytes(sp, 1, Recompute::selective), 34 * s * b * h / t);
}

TEST(Memory, WeightsGradientsAndOptimizerPerParameter) {
  auto topo = podsim::testing::preset("dgx-a100-superpod");
  auto w = gpt3(topo);
  auto programs = build_schedule(Schedule::one_f_one_b, 8, 96, 1);
  auto mem = stage_memory(w, 1, 1, peak_in_flight(programs), topo.device_profile);
  double params = stage_params(w, 3);
  EXPECT_DOUBLE_EQ(mem[3].weights, 2 * params);
  EXPECT_DOUBLE_EQ(mem[3].gradients, 4 * params);
  EXPECT_DOUBLE_EQ(mem[3].optimizer, 12 * params);
  // Stage 0 holds p microbatches of activations in 1F1B, the last stage one.
  EXPECT_GT(mem[0].activations, mem[7].activations - 1);
  // ZeRO-1 shards the optimizer state over the 16 data-parallel replicas.
  auto zero = gpt3(topo, {{"parallel.zero", "1"}});
  auto zmem = stage_memory(zero, 1, 1, peak_in_flight(programs), topo.device_profile);
  EXPECT_DOUBLE_EQ(zmem[3].optimizer, 12 * params / 16);
  // Stage parameters add up to the model: the tied output embedding is a second copy on the last stage,
  // and position embeddings are replicated on every tensor-parallel rank.
  double total = 0;
  for (int s = 0; s < 8; ++s) total += stage_params(w, s) * w.parallel.tp;
  double tied_copy = static_cast<double>(w.model.vocab) * w.model.hidden;
  double replicated = (w.parallel.tp - 1.0) * w.model.seq_len * w.model.hidden;
  EXPECT_NEAR(total - tied_copy - replicated, total_params(w.model), total_params(w.model) * 1e-4);
}

TEST(Memory, ConfigThatDoesNotFitIsReportedNotSimulated) {
  auto topo = podsim::testing::preset("dgx-a100-superpod");
  auto w = gpt3(topo, {{"parallel.tp", "1"},
                       {"parallel.pp", "8"},
                       {"parallel.schedule", "1f1b"},
                       {"parallel.virtual_stages", "1"}});
  EXPECT_THROW(build_megatron_step(topo, w, 1, 1), InfeasibleConfig);
  auto model = load_workload_model(podsim::testing::source_path("workloads/gpt3-175b.yaml"),
                                   {{"parallel.tp", "1"},
                                    {"parallel.pp", "8"},
                                    {"parallel.schedule", "1f1b"},
                                    {"parallel.virtual_stages", "1"}},
                                   topo);
  auto r = cli::simulate(topo, *model);
  EXPECT_EQ(r.status, "out_of_memory");
  EXPECT_GT(r.memory_per_device(), topo.device.hbm_bytes);
  EXPECT_NE(r.status_detail.find("GiB"), std::string::npos);
}
