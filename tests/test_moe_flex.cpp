// The flex token dispatcher (moe.dispatcher: flex, Megatron-Core moe_token_dispatcher_type "flex" with the
// DeepEP / HybridEP backend): a token crosses to each remote node its experts live on once, then into each
// rank there that holds one of them (network/expert_dispatch.hpp). Distinct nodes and both stages' bytes
// against closed forms, the simulated EP time against the all-to-all's, bad input.
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
WorkloadConfig read(const std::string& dispatcher, int ep, int per_node, int etp = 1,
                    const std::string& moe_extra = "") {
  std::string text =
      "name: t\nkind: transformer_lm\nmodel:\n  layers: 4\n  hidden: 1024\n  heads: 8\n  ffn_hidden: 4096\n"
      "  seq_len: 2048\n  vocab: 32000\n  mlp: swiglu\n  norm: rmsnorm\n  position_embedding: rope\n"
      "  tied_embeddings: false\n  linear_bias: false\nmoe:\n  experts: 16\n  top_k: 2\n  ffn_hidden: 2048\n"
      "  dispatcher: " +
      dispatcher + "\n" + moe_extra + "parallel:\n  tp: 1\n  pp: 1\n  dp: " + std::to_string(ep * etp) +
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
  // The nodes follow the layout a plan candidate sets, not the one the file was read with.
  auto candidate = read("flex", 8, 8);
  candidate.parallel.ep = 16;
  EXPECT_DOUBLE_EQ(ep_group_nodes(candidate), 2);
  candidate.parallel.etp = 2;
  EXPECT_DOUBLE_EQ(ep_group_nodes(candidate), 4);
}

TEST(MoeFlex, DispatchBytesAreTheTwoStagesClosedForm) {
  double tokens = 2 * 2048.0, row = 1024 * 2.0;
  // 2 nodes of 8 ranks, one expert each: a token reaches the other node unless both its experts are
  // local (8/16 x 7/15), and a given rank unless neither is its expert (15/16 x 14/15).
  auto flex = read("flex", 16, 8);
  auto t = moe_traffic(flex, 2);
  double p_node = 1 - 8.0 / 16 * 7 / 15, p_rank = 1 - 15.0 / 16 * 14 / 15;
  EXPECT_NEAR(routed_to_any_of(flex, 8), p_node, 1e-12);
  EXPECT_NEAR(t.flex_to_each_remote_peer, tokens * p_node * row, 1e-3);
  // Each rank's NVLink stage writes its own tokens and those that crossed to it from the other node.
  EXPECT_NEAR(t.flex_to_each_local_peer, tokens * 2 * p_rank * row, 1e-3);
  EXPECT_NEAR(t.dispatch_bytes, 1 * t.flex_to_each_remote_peer + 7 * t.flex_to_each_local_peer, 1e-3);
  // Inside one node: NVLink only, each token once into each rank holding one of its experts (fewer bytes
  // than the all-to-all's copy per expert: 8 ranks of 2 experts).
  auto one = moe_traffic(read("flex", 8, 8), 2);
  EXPECT_DOUBLE_EQ(one.flex_to_each_remote_peer, 0);
  EXPECT_NEAR(one.flex_to_each_local_peer, tokens * (1 - 14.0 / 16 * 13 / 15) * row, 1e-3);
  EXPECT_LT(one.dispatch_bytes, moe_traffic(read("alltoall", 8, 8), 2).dispatch_bytes);
  // Imbalance scales both stages to the busiest receiver, as the all-to-all.
  auto skewed = flex;
  skewed.moe.imbalance = 2;
  EXPECT_GT(moe_traffic(skewed, 2).flex_to_each_local_peer, t.flex_to_each_local_peer);
}

TEST(MoeFlex, SimulatedExpertTrafficFollowsTheTwoStages) {
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
  // Inside one node (128 experts over 8 ranks, top-8) the flex dispatcher writes a token once into each
  // rank holding one of its experts (P = 1 - C(112, 8) / C(128, 8)) where the all-to-all sends one copy
  // per expert (8 per token, 1 per rank on average), at HybridEP's NVLink fraction instead of NCCL's.
  auto topo = podsim::testing::preset("dgx-h100-superpod", {{"nodes", "1"}});
  double p_rank = 1;
  for (int i = 0; i < 8; ++i) p_rank *= (112.0 - i) / (128 - i);
  p_rank = 1 - p_rank;
  double rate = topo.fabric_profile.efficiency("nvlink") / topo.fabric_profile.dispatch_efficiency("nvlink");
  EXPECT_NEAR(run(1, "8", "flex").mean[Category::ep] / run(1, "8", "alltoall").mean[Category::ep],
              p_rank * rate, 0.05 * p_rank * rate);
}

TEST(MoeFlex, GroupLimitedRoutingReachesFewerRanks) {
  // 16 experts in 4 groups of 4, a token's 2 experts among its best 2 groups (8 experts): a group is
  // chosen with P 2/4; given that, a held set of h of its experts is missed with C(8 - h, 2) / C(8, 2).
  auto grouped = read("flex", 8, 8, 1, "  router_groups: 4\n  router_group_topk: 2\n");
  EXPECT_NEAR(routed_to_any_of(grouped, 4), 0.5 * (1 - 6.0 / 28), 1e-12);   // one whole group
  EXPECT_NEAR(routed_to_any_of(grouped, 2), 0.5 * (1 - 15.0 / 28), 1e-12);  // half of one
  // Two groups: both chosen with P 1/6 (always hit), one with P 4/6.
  EXPECT_NEAR(routed_to_any_of(grouped, 8), 1 - (1.0 / 6 + 4.0 / 6 * 6 / 28), 1e-12);
  // Without the limit: 1 - C(12, 2) / C(16, 2); the limit concentrates a token on fewer ranks.
  auto free = read("flex", 8, 8);
  EXPECT_NEAR(routed_to_any_of(free, 4), 1 - 66.0 / 120, 1e-12);
  EXPECT_LT(routed_to_any_of(grouped, 4), routed_to_any_of(free, 4));
  EXPECT_LT(moe_traffic(grouped, 2).flex_to_each_local_peer, moe_traffic(free, 2).flex_to_each_local_peer);
  // router_group_topk = router_groups is no limit.
  auto all = read("flex", 8, 8, 1, "  router_groups: 4\n  router_group_topk: 4\n");
  EXPECT_DOUBLE_EQ(routed_to_any_of(all, 4), routed_to_any_of(free, 4));
}

TEST(MoeFlex, RouterGroupsMustSplitTheExpertsAndHoldTopK) {
  std::string e = error_of([] { read("flex", 8, 8, 1, "  router_groups: 3\n"); });
  EXPECT_NE(e.find("router_groups"), std::string::npos) << e;
  EXPECT_NE(e.find("1, 2, 4, 8, 16"), std::string::npos) << e;
  // 16 groups of one expert: top_k 2 needs at least 2 of them.
  e = error_of([] { read("flex", 8, 8, 1, "  router_groups: 16\n  router_group_topk: 1\n"); });
  EXPECT_NE(e.find("router_group_topk"), std::string::npos) << e;
  EXPECT_NE(e.find("2..16"), std::string::npos) << e;
}

TEST(MoeFlex, UnknownDispatcherIsAClearError) {
  std::string e = error_of([] { read("deepep", 8, 8); });
  EXPECT_NE(e.find("dispatcher"), std::string::npos) << e;
  EXPECT_NE(e.find("flex"), std::string::npos) << e;
  EXPECT_NE(e.find("w.yaml:"), std::string::npos) << e;
}
