// Mixture-of-experts decoder layers on GPUs (issue 15): parameter counts of the presets against the
// published sizes, NVIDIA's FLOPs convention, the bytes of a dispatch against the closed form, capacity and
// dropping arithmetic, expert sharding, EP inside vs across nodes, imbalance monotonicity, bad input.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "podsim/core/config_node.hpp"
#include "podsim/driver/simulation.hpp"
#include "podsim/workload/transformer/moe_costs.hpp"
#include "podsim/workload/transformer/moe_math.hpp"
#include "podsim/workload/transformer/moe_memory.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"
#include "podsim/workload/workload_model.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::workload;
using podsim::testing::error_of;
using podsim::testing::source_path;

namespace {

WorkloadConfig preset_workload(const std::string& name, int devices = 4096) {
  auto root = ConfigNode::load_file(source_path("workloads/" + name + ".yaml"));
  return read_transformer_workload(root, devices, 8);
}

// A small MoE model: 4 layers of 16 experts top-2 (Mixtral-like, narrow), on `devices` devices.
std::string small_moe(const std::string& moe_extra, const std::string& parallel) {
  return "name: t\nkind: transformer_lm\nmodel:\n  layers: 4\n  hidden: 1024\n  heads: 8\n  ffn_hidden: "
         "4096\n"
         "  seq_len: 2048\n  vocab: 32000\n  mlp: swiglu\n  norm: rmsnorm\n  position_embedding: rope\n"
         "  tied_embeddings: false\n  linear_bias: false\nmoe:\n  experts: 16\n  top_k: 2\n  ffn_hidden: "
         "2048\n" +
         moe_extra + "parallel:\n" + parallel + "training:\n  global_batch: 64\n  precision: bf16\n";
}

WorkloadConfig read_small(const std::string& moe_extra, const std::string& parallel, int devices = 16) {
  return read_transformer_workload(ConfigNode::load_string(small_moe(moe_extra, parallel), "w.yaml"), devices,
                                   8);
}

report::RunResult run_preset(const std::string& name, int nodes, Overrides sets) {
  auto topo = podsim::testing::preset("dgx-h100-superpod", {{"nodes", std::to_string(nodes)}});
  auto model = load_workload_model(source_path("workloads/" + name + ".yaml"), sets, topo);
  return driver::simulate(topo, *model);
}

// Qwen3-30B-A3B cut to 4 layers and 64 sequences: quick to simulate, the same MoE layer.
report::RunResult run_qwen(int nodes, Overrides sets) {
  Overrides base = {{"model.layers", "4"},
                    {"training.global_batch", std::to_string(8 * nodes)},
                    {"parallel.dp", std::to_string(8 * nodes)}};
  base.insert(base.end(), sets.begin(), sets.end());
  return run_preset("qwen3-30b-a3b", nodes, base);
}

}  // namespace

// Published total / active sizes: the counts must round or truncate to them (Qwen3-30B-A3B's "3.3B
// activated" is 3.35B counted: attention 18.9M + 8 experts 37.7M + router 0.26M per layer x 48, plus both
// untied 0.31B embedding tables).
TEST(Moe, ParameterCountsMatchPublishedSizes) {
  struct Case {
    const char* preset;
    double total, active, half_digit;
  } cases[] = {{"qwen3-30b-a3b", 30.5, 3.3, 0.05},
               {"qwen3-235b-a22b", 235, 22, 0.5},
               {"mixtral-8x7b", 46.7, 12.9, 0.05},
               {"mixtral-8x22b", 141, 39, 0.5}};
  for (const auto& c : cases) {
    WorkloadConfig w = preset_workload(c.preset);
    EXPECT_NEAR(moe_total_params(w) / 1e9, c.total, c.half_digit) << c.preset;
    double active = moe_active_params(w) / 1e9;
    EXPECT_GE(active, c.active - c.half_digit) << c.preset;
    EXPECT_LT(active, c.active + 2 * c.half_digit) << c.preset;
  }
  // gpt-oss-120b: 116.83B total; 5.13B active, which OpenAI counts without the input embedding table.
  WorkloadConfig g = preset_workload("gpt-oss-120b");
  EXPECT_NEAR(moe_total_params(g) / 1e9, 116.83, 0.005);
  EXPECT_NEAR((moe_active_params(g) - embedding_params(g.model)) / 1e9, 5.13, 0.005);
}

TEST(Moe, DenseModelsKeepTheirCounts) {
  WorkloadConfig w = preset_workload("llama3-8b", 8);
  EXPECT_FALSE(w.moe.enabled());
  EXPECT_DOUBLE_EQ(moe_total_params(w), total_params(w.model));
  EXPECT_DOUBLE_EQ(moe_model_flops_causal(w, 128), model_flops_causal(w.model, 128));
}

// NVIDIA's mixtral formula: the llama formula with 18 * top_k * f / h as the MLP term (no router).
TEST(Moe, CausalFlopsAreNvidiaMixtralFormula) {
  for (const char* name : {"mixtral-8x7b", "mixtral-8x22b"}) {
    WorkloadConfig w = preset_workload(name);
    const auto& m = w.model;
    double B = 128, s = m.seq_len, L = m.layers, h = m.hidden, a = m.heads, g = m.kv_heads,
           f = w.moe.ffn_hidden, k = w.moe.top_k, V = m.vocab;
    double nvidia =
        B * s * L * h * h * (12 + 12 * g / a + 18 * k * f / h + 12 * s / h * 0.5 + 6 * V / (L * h));
    EXPECT_NEAR(moe_model_flops_causal(w, B) / nvidia, 1.0, 1e-12) << name;
    EXPECT_GT(moe_hardware_flops(w, B), moe_model_flops_causal(w, B));  // + the router GEMM
  }
}

// Bytes per rank per dispatch = tokens routed x top_k x hidden x activation bytes (self share included,
// nccl-tests' all_to_all convention), scaled to the busiest rank's share under imbalance.
TEST(Moe, DispatchBytesAreTheClosedForm) {
  WorkloadConfig w = read_small("", "  tp: 1\n  pp: 1\n  dp: 16\n  ep: 8\n");
  MoeTraffic t = moe_traffic(w, 2);
  double tokens = 2 * 2048.0;
  EXPECT_DOUBLE_EQ(t.routed_tokens, tokens);
  EXPECT_DOUBLE_EQ(t.dispatch_bytes, tokens * 2 * 1024 * 2);
  EXPECT_DOUBLE_EQ(t.mean_expert_tokens, tokens * 2 / 2);  // 2 local experts share the 2x copies
  WorkloadConfig skew = read_small("  imbalance: 3\n", "  tp: 1\n  pp: 1\n  dp: 16\n  ep: 8\n");
  MoeTraffic s = moe_traffic(skew, 2);
  EXPECT_DOUBLE_EQ(s.busiest_expert_tokens, 3 * s.mean_expert_tokens);
  EXPECT_DOUBLE_EQ(s.dispatch_bytes, t.dispatch_bytes * (2 - 1 + 3) / 2.0);
  // Sequence parallelism: each TP rank routes its 1/tp shard.
  WorkloadConfig sp = read_small("", "  tp: 2\n  pp: 1\n  dp: 8\n  ep: 8\n  sequence_parallel: true\n");
  EXPECT_DOUBLE_EQ(moe_traffic(sp, 2).dispatch_bytes, t.dispatch_bytes / 2);
  // The all-gather dispatcher gathers every EP rank's tokens once (not x top_k).
  WorkloadConfig ag = read_small("  dispatcher: allgather\n", "  tp: 1\n  pp: 1\n  dp: 16\n  ep: 8\n");
  EXPECT_DOUBLE_EQ(moe_traffic(ag, 2).dispatch_bytes, tokens * 1024 * 2 * 8);
}

TEST(Moe, CapacityAndDroppingArithmetic) {
  MoeConfig m;
  m.experts = 8;
  m.top_k = 2;
  m.imbalance = 2;
  EXPECT_DOUBLE_EQ(busiest_expert_load(m), 2);  // dropless: the busiest expert computes all it gets
  EXPECT_DOUBLE_EQ(dropped_fraction(m), 0);
  m.capacity_factor = 1.25;
  EXPECT_DOUBLE_EQ(busiest_expert_load(m), 1.25);
  EXPECT_DOUBLE_EQ(dropped_fraction(m), 0.75 / 8);  // (2 - 1.25) x mean of 1 expert out of 8
  m.imbalance = 1;
  EXPECT_DOUBLE_EQ(dropped_fraction(m), 0);  // balanced routing within capacity drops nothing
}

// Routed experts split over ep; their optimizer state over the expert data-parallel ranks.
TEST(Moe, ExpertsShardOverEpAndExpertDataParallel) {
  WorkloadConfig w8 = read_small("", "  tp: 1\n  pp: 1\n  dp: 16\n  ep: 8\n");
  WorkloadConfig w16 = read_small("", "  tp: 1\n  pp: 1\n  dp: 16\n  ep: 16\n");
  EXPECT_DOUBLE_EQ(expert_data_parallel(w8.parallel), 2);
  EXPECT_DOUBLE_EQ(expert_data_parallel(w16.parallel), 1);
  EXPECT_DOUBLE_EQ(expert_stage_params(w8, 0), 2 * expert_stage_params(w16, 0));
  EXPECT_DOUBLE_EQ(expert_stage_params(w8, 0), 4 * 2 * 3 * 1024.0 * 2048);  // 4 layers x 2 experts
  WorkloadConfig etp =
      read_small("", "  tp: 2\n  pp: 1\n  dp: 8\n  ep: 4\n  etp: 2\n  sequence_parallel: true\n");
  EXPECT_DOUBLE_EQ(expert_stage_params(etp, 0), expert_stage_params(w8, 0));  // 4 experts, half columns
}

TEST(Moe, MoeStepAddsUpAndStaysPhysical) {
  auto r = run_qwen(2, {});
  ASSERT_EQ(r.status, "ok");
  for (const auto& s : r.stages) EXPECT_NEAR(s.total(), r.step_time(), 1e-9 * r.step_time());
  EXPECT_GT(r.mean[Category::ep], 0);
  EXPECT_LT(r.mfu(), 1.0);
}

// The same dispatch per rank: an EP group inside one NVLink node moves it faster than one spanning two
// nodes, where half of every rank's tokens cross InfiniBand.
TEST(Moe, ExpertParallelInsideANodeBeatsAcrossNodes) {
  auto inside = run_qwen(2, {{"parallel.ep", "8"}});
  auto across = run_qwen(2, {{"parallel.ep", "16"}});
  ASSERT_EQ(inside.status, "ok");
  ASSERT_EQ(across.status, "ok");
  EXPECT_GT(across.mean[Category::ep], 2 * inside.mean[Category::ep]);
  auto none = run_qwen(1, {{"parallel.ep", "1"}});
  ASSERT_EQ(none.status, "ok");
  EXPECT_EQ(none.mean[Category::ep], 0);
}

TEST(Moe, MoreImbalanceIsNeverFaster) {
  double last = 0;
  for (const char* skew : {"1", "1.5", "3", "8"}) {
    auto r = run_qwen(1, {{"moe.imbalance", skew}, {"parallel.ep", "8"}});
    ASSERT_EQ(r.status, "ok") << skew;
    EXPECT_GE(r.step_time(), last) << skew;
    last = r.step_time();
  }
}

TEST(Moe, BadInputIsAClearError) {
  std::string dp16 = "  tp: 1\n  pp: 1\n  dp: 16\n";
  struct Case {
    std::string moe, parallel, expect;
    int devices;
  } cases[] = {
      {"", "  tp: 1\n  pp: 1\n  dp: 32\n  ep: 32\n", "must divide moe.experts 16", 32},
      {"", dp16 + "  ep: 32\n", "ep x etp = 32 x 1 = 32 expert ranks, but the topology has 16", 16},
      {"", "  tp: 1\n  pp: 2\n  dp: 4\n  ep: 16\n", "must divide the tp*cp*dp = 1*1*4 = 4 ranks", 16},
      {"  capacity_factor: 0\n", dp16, "capacity_factor 0 must be a number > 0", 16},
      {"  capacity_factor: -1\n", dp16, "capacity_factor", 16},
      {"", "  tp: 2\n  pp: 1\n  dp: 8\n  ep: 8\n", "needs sequence_parallel: true", 16},
      {"  imbalance: 0.5\n", dp16, "imbalance", 16},
      {"  router: topk\n", dp16, "router", 16},
  };
  for (const auto& c : cases) {
    std::string e = error_of([&] { read_small(c.moe, c.parallel, c.devices); });
    EXPECT_NE(e.find(c.expect), std::string::npos) << c.expect << " | got: " << e;
    EXPECT_NE(e.find("w.yaml:"), std::string::npos) << e;
  }
  std::string topk = small_moe("", dp16);
  topk.replace(topk.find("top_k: 2"), 8, "top_k: 17");
  std::string e =
      error_of([&] { read_transformer_workload(ConfigNode::load_string(topk, "w.yaml"), 16, 8); });
  EXPECT_NE(e.find("top_k 17 routes each token to more experts than the 16"), std::string::npos) << e;
  // Expert parallelism without experts.
  std::string dense =
      "name: t\nkind: transformer_lm\nmodel:\n  layers: 2\n  hidden: 256\n  heads: 4\n"
      "  seq_len: 128\n  vocab: 1000\nparallel:\n  dp: 8\n  ep: 8\ntraining:\n  global_batch: 8\n";
  e = error_of([&] { read_transformer_workload(ConfigNode::load_string(dense, "d.yaml"), 8, 8); });
  EXPECT_NE(e.find("expert parallelism needs experts"), std::string::npos) << e;
}

TEST(Moe, LayerCountsOfARangeMatchTheLayerByLayerRule) {
  // moe_layers_in counts in closed form what is_moe_layer says layer by layer, for every range, start
  // layer and frequency (DeepSeek-V3's three dense layers first, Megatron's every-other-layer MoE).
  for (long long freq : {1, 2, 3, 5})
    for (long long dense_first : {0, 1, 3, 7}) {
      auto w = read_small("", "  ep: 2\n");
      w.moe.layer_freq = freq;
      w.moe.first_dense_layers = dense_first;
      for (long long first = 0; first < 20; ++first)
        for (long long count = 0; count < 25; ++count) {
          long long want = 0;
          for (long long i = first; i < first + count; ++i) want += is_moe_layer(w, i) ? 1 : 0;
          ASSERT_EQ(moe_layers_in(w, first, count), want)
              << "freq " << freq << " first dense " << dense_first << " range [" << first << ", "
              << first + count << ")";
        }
    }
}
