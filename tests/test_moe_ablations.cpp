// NVIDIA's measured ablations of one MoE job (validation/megatron-bridge-moe-ablations.csv: Qwen3-30B-A3B on
// 16 H100s, BF16, one setting changed per run) against podsim's mechanisms. The absolute error is what the
// README reports; the tests hold the ratios between the runs, which isolate one mechanism each: the flex
// dispatcher's speedup over NCCL's all-to-all (its two stages, network/expert_dispatch.hpp) and the gain of
// overlapping the all-to-alls with the other microbatch's compute (less the SMs HybridEP holds meanwhile);
// and the HybridEP time against the run's published profile.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "podsim/core/config_node.hpp"
#include "podsim/driver/nvidia_validation.hpp"
#include "podsim/network/expert_dispatch.hpp"
#include "podsim/network/link_load.hpp"
#include "podsim/workload/transformer/moe_costs.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"
#include "test_helpers.hpp"

namespace podsim {
namespace {

using podsim::testing::source_path;

struct Runs {
  std::map<std::string, double> predicted, published;
  nlohmann::json json;  // what --json writes
};

const Runs& ablations() {
  static const Runs runs = [] {
    driver::NvidiaValidationRequest request{source_path("validation/megatron-bridge-moe-ablations.csv"),
                                            source_path("validation/nvidia-presets.yaml"),
                                            {},
                                            {}};
    auto v = driver::validate_nvidia_table(request);
    Runs r;
    for (const auto& row : v.rows) {
      EXPECT_EQ(row.status, "ok") << row.row.row_id << ": " << row.detail;
      r.predicted[row.row.row_id] = row.predicted;
      r.published[row.row.row_id] = *row.row.published;
    }
    r.json = nlohmann::json::parse(driver::nvidia_validation_json(v));
    return r;
  }();
  return runs;
}

double ratio(const std::map<std::string, double>& tokens, const char* a, const char* b) {
  return tokens.at(a) / tokens.at(b);
}

TEST(MoeAblations, EveryRunIsExpressedWithItsOwnSetting) {
  const auto& r = ablations();
  ASSERT_EQ(r.predicted.size(), 5u);
  // A4 adds HybridEP's 64-token combine chunks to A3, which podsim does not model.
  EXPECT_DOUBLE_EQ(r.predicted.at("A4"), r.predicted.at("A3"));
  EXPECT_NE(r.predicted.at("A1"), r.predicted.at("A2"));
  // The output says what each run changed (--json; validation.csv likewise).
  EXPECT_EQ(r.json["rows"][0]["row_id"], "A1");
  EXPECT_EQ(r.json["rows"][0]["settings"], "moe.dispatcher=alltoall; moe.dispatcher_sms=auto");
  EXPECT_TRUE(r.json["rows"][2]["settings"].is_null());  // A2: the recipe as it is
}

// Measured: HybridEP runs the job 1.67x as fast as the NCCL all-to-all dispatcher (A1 has no CUDA graphs and
// an unfused permutation, A2 graphs over the router: small next to the dispatcher, see the CSV's header).
// podsim predicts less (1.45x): its HybridEP time matches the profile (ProfiledHybridEpTime below) and its
// NCCL all-to-all runs at the rate NCCL's maintainers give for two servers (bus bandwidth twice the NIC's,
// NVIDIA/nccl-tests issue 130), so A1's missing time (+37%) is elsewhere: its unfused permutation and no CUDA
// graphs, not modelled. The test holds the speedup within 15% of the measured one.
TEST(MoeAblations, FlexDispatcherSpeedupIsNearTheMeasuredOne) {
  const auto& r = ablations();
  double measured = ratio(r.published, "A2", "A1"), predicted = ratio(r.predicted, "A2", "A1");
  EXPECT_NEAR(predicted / measured, 1.0, 0.15)
      << "predicted " << predicted << "x, measured " << measured << "x";
}

// Measured: overlapping the all-to-alls (combined 1F1B) gains 18%, hiding 36.55% of the communication
// (the profile in the CSV's header), whose time grows from ~8.3 to ~10.8 s per step when it runs beside
// compute. podsim slows the compute beside HybridEP (the SMs it holds), not the communication, and so
// predicts more (1.39x, an open gap). The test holds: a gain, below hiding every exposed all-to-all.
TEST(MoeAblations, ExpertParallelOverlapGainsLessThanHidingAllOfIt) {
  const auto& r = ablations();
  double measured = ratio(r.published, "A3", "A2"), predicted = ratio(r.predicted, "A3", "A2");
  EXPECT_GT(predicted, 1.0) << "predicted " << predicted << "x, measured " << measured << "x";
  // A2's step less its exposed HybridEP time (profile: ~8.3 s of 24.7 s) would be a 1.5x gain.
  EXPECT_LT(predicted, 1.5) << "predicted " << predicted << "x, measured " << measured << "x";
}

// The profile of A2 (HybridEP, no overlap) has ~8.25 s of HybridEP communication per step (9.079 ms
// concurrent with compute = 0.11% of it). podsim's two stages (network/expert_dispatch.hpp) at the
// fabric profile's HybridEP rates, dispatch + combine forward and backward of 48 layers x 64 microbatches.
TEST(MoeAblations, ProfiledHybridEpTime) {
  auto topo = podsim::testing::preset("dgx-h100-superpod", {{"nodes", "2"}});
  std::string text =
      "name: q\nkind: transformer_lm\nmodel:\n  layers: 48\n  hidden: 2048\n  heads: 32\n  kv_heads: 4\n"
      "  head_dim: 128\n  ffn_hidden: 6144\n  seq_len: 4096\n  vocab: 151936\n  mlp: swiglu\n"
      "  norm: rmsnorm\n  position_embedding: rope\n  tied_embeddings: false\n  linear_bias: false\n"
      "moe:\n  experts: 128\n  top_k: 8\n  ffn_hidden: 768\n  dispatcher: flex\nparallel:\n  tp: 1\n"
      "  pp: 1\n  dp: 16\n  ep: 16\ntraining:\n  global_batch: 1024\n  precision: bf16\n";
  auto w = workload::read_transformer_workload(ConfigNode::load_string(text, "q.yaml"), 16, 8);
  auto t = workload::moe_traffic(w, 1);
  std::vector<int> group;
  for (int i = 0; i < 16; ++i) group.push_back(i);
  auto d = network::plan_hierarchical_dispatch(
      topo, {group, t.flex_to_each_remote_peer, t.flex_to_each_local_peer});
  double per_step = network::idle_plan_time(topo, {d}) * 4 * 48 * 64;
  EXPECT_NEAR(per_step / 8.25, 1, 0.10) << per_step << " s per step";
}

}  // namespace
}  // namespace podsim
