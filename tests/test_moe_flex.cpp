// The flex token dispatcher (moe.dispatcher: flex, Megatron-Core moe_token_dispatcher_type "flex" with the
// DeepEP / HybridEP backend): a token crosses to each remote node its experts live on once. Distinct nodes
// and dispatch bytes against closed forms, one node equal to the all-to-all, the simulated EP time, bad
// input.
#include <gtest/gtest.h>

#include <string>

#include "podsim/core/config_node.hpp"
#include "podsim/driver/simulation.hpp"
#include "podsim/workload/transformer/moe_costs.hpp"
#include "podsim/workload/transformer/moe_math.hpp"
#include "podsim/workload/workload_model.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::workload;
using podsim::testing::error_of;
using podsim::testing::source_path;

namespace {

// 16 experts of top-2, hidden 1024, seq 2048, bf16, tp 1, dp = ep.
WorkloadConfig read(const std::string& dispatcher, int ep, int per_node, int etp = 1) {
  std::string text =
      "name: t\nkind: transformer_lm\nmodel:\n  layers: 4\n  hidden: 1024\n  heads: 8\n  ffn_hidden: 4096\n"
      "  seq_len: 2048\n  vocab: 32000\n  mlp: swiglu\n  norm: rmsnorm\n  position_embedding: rope\n"
      "  tied_embeddings: false\n  linear_bias: false\nmoe:\n  experts: 16\n  top_k: 2\n  ffn_hidden: 2048\n"
      "  dispatcher: " +
      dispatcher + "\nparallel:\n  tp: 1\n  pp: 1\n  dp: " + std::to_string(ep * etp) +
      "\n  ep: " + std::to_string(ep) + "\n  etp: " + std::to_string(etp) +
      "\ntraining:\n  global_batch: 64\n  precision: bf16\n";
  return read_transformer_workload(ConfigNode::load_string(text, "w.yaml"), ep * etp, per_node);
}

}  // namespace

TEST(MoeFlex, DistinctNodesAreTheClosedForm) {
  // 2 nodes of 8 experts: P(a node gets none of the 2) = 8/16 x 7/15.
  auto two = read("flex", 16, 8);
  EXPECT_DOUBLE_EQ(ep_group_nodes(two), 2);
  EXPECT_NEAR(flex_distinct_nodes(two), 2 * (1 - 8.0 / 16 * 7 / 15), 1e-12);
  // 4 nodes of 4 experts: 12/16 x 11/15.
  auto four = read("flex", 16, 4);
  EXPECT_DOUBLE_EQ(ep_group_nodes(four), 4);
  EXPECT_NEAR(flex_distinct_nodes(four), 4 * (1 - 12.0 / 16 * 11 / 15), 1e-12);
  // etp 2: the EP group strides by 2 ranks, so 4 of its ranks share a node of 8.
  EXPECT_DOUBLE_EQ(ep_group_nodes(read("flex", 8, 8, 2)), 2);
  EXPECT_DOUBLE_EQ(flex_distinct_nodes(read("flex", 8, 8)), 1);  // one node
}

TEST(MoeFlex, DispatchBytesFollowTheDistinctNodes) {
  double tokens = 2 * 2048.0, row = 1024 * 2.0;
  auto flex = read("flex", 16, 8);
  auto a2a = read("alltoall", 16, 8);
  EXPECT_DOUBLE_EQ(moe_traffic(a2a, 2).dispatch_bytes, tokens * 2 * row);
  EXPECT_NEAR(moe_traffic(flex, 2).dispatch_bytes, tokens * flex_distinct_nodes(flex) * row, 1e-3);
  // As a uniform all-to-all its cross-node half is each token once per remote node it reaches.
  double remote = (1 - 8.0 / 16 * 7 / 15);
  EXPECT_NEAR(moe_traffic(flex, 2).dispatch_bytes / 2, tokens * remote * row, 1e-3);
  // Inside one node the flex dispatcher moves what the all-to-all does.
  EXPECT_DOUBLE_EQ(moe_traffic(read("flex", 8, 8), 2).dispatch_bytes,
                   moe_traffic(read("alltoall", 8, 8), 2).dispatch_bytes);
  // Never more than the all-to-all (distinct nodes <= top_k).
  EXPECT_LE(moe_traffic(read("flex", 16, 4), 2).dispatch_bytes,
            moe_traffic(read("alltoall", 16, 4), 2).dispatch_bytes);
}

TEST(MoeFlex, SimulatedExpertTrafficShrinksAcrossNodesOnly) {
  auto run = [](int nodes, const std::string& ep, const std::string& dispatcher) {
    auto topo = podsim::testing::preset("dgx-h100-superpod", {{"nodes", std::to_string(nodes)}});
    Overrides sets = {{"model.layers", "4"},
                      {"training.global_batch", std::to_string(8 * nodes)},
                      {"parallel.dp", std::to_string(8 * nodes)},
                      {"parallel.ep", ep},
                      {"moe.dispatcher", dispatcher}};
    auto model = load_workload_model(source_path("workloads/qwen3-30b-a3b.yaml"), sets, topo);
    return driver::simulate(topo, *model);
  };
  auto a2a = run(2, "16", "alltoall"), flex = run(2, "16", "flex");
  ASSERT_EQ(a2a.status, "ok");
  ASSERT_EQ(flex.status, "ok");
  EXPECT_LT(flex.mean[Category::ep], a2a.mean[Category::ep]);
  EXPECT_DOUBLE_EQ(run(1, "8", "flex").mean[Category::ep], run(1, "8", "alltoall").mean[Category::ep]);
}

TEST(MoeFlex, UnknownDispatcherIsAClearError) {
  std::string e = error_of([] { read("deepep", 8, 8); });
  EXPECT_NE(e.find("dispatcher"), std::string::npos) << e;
  EXPECT_NE(e.find("flex"), std::string::npos) << e;
  EXPECT_NE(e.find("w.yaml:"), std::string::npos) << e;
}
