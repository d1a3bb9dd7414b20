// DeepSeek multi-head latent attention and multi-token prediction in transformer_lm: parameters against
// the DeepSeek-V3 paper's closed form, model FLOPs against NVIDIA's DeepSeek-V3 formula, the Megatron-Core
// tensor-parallel split (kernels and collectives per rank), activation memory, MTP on the last stage (and
// its loss's memory), and the errors for inconsistent keys. The MoE layers of DeepSeek-V3 are not here (no
// moe: block on this branch): the model is DeepSeek-V3 with every layer dense
// (tests/data/deepseek-v3-dense-mla.yaml).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "podsim/core/config_node.hpp"
#include "podsim/driver/simulation.hpp"
#include "podsim/workload/transformer/layer_ops.hpp"
#include "podsim/workload/transformer/memory_model.hpp"
#include "podsim/workload/transformer/mla_math.hpp"
#include "podsim/workload/transformer/mtp_ops.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"
#include "podsim/workload/workload_model.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::workload;
using podsim::testing::error_of;
using podsim::testing::source_path;

namespace {

const char* kDenseV3 = "tests/data/deepseek-v3-dense-mla.yaml";

// DeepSeek-V3's model section (identical in the preset and the test file) with `extra` lines appended.
std::string v3_model(const std::string& extra = "") {
  return "  layers: 61\n  hidden: 7168\n  heads: 128\n  ffn_hidden: 18432\n  seq_len: 4096\n  vocab: 129280\n"
         "  mlp: swiglu\n  norm: rmsnorm\n  position_embedding: rope\n  tied_embeddings: false\n"
         "  linear_bias: false\n  attention: mla\n  q_lora_rank: 1536\n  kv_lora_rank: 512\n"
         "  qk_nope_head_dim: 128\n  qk_rope_head_dim: 64\n  v_head_dim: 128\n" +
         extra;
}

WorkloadConfig read(const std::string& model_yaml, int tp = 1, bool sp = false, int cp = 1) {
  std::string text = "name: t\nkind: transformer_lm\nmodel:\n" + model_yaml +
                     fmt::format(
                         "parallel:\n  tp: {}\n  pp: 1\n  dp: 1\n  cp: {}\n  sequence_parallel: {}\n"
                         "training:\n  global_batch: 8\n  attention: flash\n",
                         tp, cp, sp ? "true" : "false");
  auto root = ConfigNode::load_string(text, "w.yaml");
  auto w = read_transformer_workload(root, 64, 8);
  validate_transformer_workload(w, root, 64);
  return w;
}

std::string error(const std::string& model_yaml, int tp = 1, int cp = 1) {
  return error_of([&] { read(model_yaml, tp, false, cp); });
}

calibration::ComputeModel h100_model(const topology::Topology& topo) {
  return calibration::ComputeModel(topo.device_profile,
                                   {.peak_flops = topo.device.peak(topology::Precision::bf16),
                                    .hbm_bandwidth = topo.device.hbm_bandwidth,
                                    .sm_count = topo.device.sm_count,
                                    .element_bytes = 2});
}

const OpCost& op(const PassCost& p, const std::string& name) {
  auto it = std::find_if(p.ops.begin(), p.ops.end(), [&](const OpCost& o) { return name == o.name; });
  if (it == p.ops.end()) throw std::runtime_error("no kernel " + name);
  return *it;
}

}  // namespace

// DeepSeek-V3 paper Sec. 2.1.1, Eqs. 1-11: W^DQ (d_c' x d), W^UQ (d_h n_h x d_c'), W^QR (d_h^R n_h x d_c'),
// W^DKV (d_c x d), W^UK and W^UV (d_h n_h x d_c each), W^KR (d_h^R x d), W^O (d x d_h n_h), plus the
// RMSNorms of the two latents.
TEST(Mla, ParametersPerLayerMatchThePaper) {
  auto root = ConfigNode::load_file(source_path("workloads/deepseek-v3.yaml"));
  ModelConfig m = read_model_section(root.child("model"), "v3");
  const double d = 7168, nh = 128, dh = 128, dhr = 64, dc = 512, dcq = 1536;
  double paper = dcq * d + dh * nh * dcq + dhr * nh * dcq + dc * d + 2 * dh * nh * dc + dhr * d + d * dh * nh;
  EXPECT_DOUBLE_EQ(mla_gemm_weights(m), paper);
  EXPECT_DOUBLE_EQ(paper, 187105280);  // 187.1M per layer
  EXPECT_DOUBLE_EQ(mla_norm_params(m), dcq + dc);
  // The layer: MLA, SwiGLU (3 d f), two RMSNorms (d each), the latent norms.
  EXPECT_DOUBLE_EQ(layer_params(m), paper + 3 * d * 18432 + 2 * d + dcq + dc);
  // Uncompressed queries (q_lora_rank 0): W^Q (d_h+d_h^R) n_h x d replaces W^DQ, W^UQ, W^QR and the q norm.
  std::string lite_yaml = v3_model();
  lite_yaml.replace(lite_yaml.find("q_lora_rank: 1536"), 17, "q_lora_rank: 0");
  ModelConfig lite = read(lite_yaml).model;
  EXPECT_DOUBLE_EQ(mla_gemm_weights(lite), paper - (dcq * d + (dh + dhr) * nh * dcq) + d * (dh + dhr) * nh);
  EXPECT_EQ(m.mtp_layers, 1);
  // One MTP module: a layer, eh_proj (2d x d), enorm, hnorm and its final norm; embedding and head shared.
  EXPECT_DOUBLE_EQ(mtp_params(m), layer_params(m) + 2 * d * d + 3 * d);
}

// NVIDIA NeMo nemo/utils/flops_formulas.py deepseekv3() at 8cfedd72 (nvidia-model-flops.md), written out
// here for every layer dense (its moe_layer_freq all 0): 6 B s (MLA params + 3 h f) per layer, the
// attention core 6 * 0.5 s^2 heads (qk + v), 6 V h s for the head; per MTP module the same layer terms
// (its FFN as NeMo counts it, shared + top-k experts: 3 h 2048 x 9 = 3 h 18432 for DeepSeek-V3), another
// 6 V h s and 6 h 2h s for eh_proj.
TEST(Mla, ModelFlopsAreNvidiasDeepSeekV3Formula) {
  WorkloadConfig w = read(v3_model("  mtp_layers: 1\n"));
  const ModelConfig& m = w.model;
  const double B = 8, s = 4096, h = 7168, heads = 128, V = 129280, L = 61, mtp = 1;
  double mla =
      h * 1536 + 1536 * (128 + 64) * heads + h * 64 + h * 512 + 512 * (128 + 128) * heads + 128 * heads * h;
  double attention = 6 * (0.5 * (128 + 64) * heads * s * s + 0.5 * 128 * heads * s * s) * (L + mtp);
  double ffn = L * h * 18432 * 3 + mtp * (h * 2048 * 3 + h * 2048 * 3 * 8);
  double linear = 6 * ((L + mtp) * mla + ffn) * s;
  double vocab = 6 * V * h * s + mtp * (6 * V * h * s + 6 * h * 2 * h * s);
  double nemo = (attention + linear + vocab) * B;
  EXPECT_NEAR(model_flops_causal(m, B) / nemo, 1.0, 1e-12);
  // Without MTP the module's terms go; the full-score count (SC21) doubles only the s^2 terms.
  ModelConfig no_mtp = m;
  no_mtp.mtp_layers = 0;
  double nemo_no_mtp = (6 * (0.5 * 192 + 0.5 * 128) * heads * s * s * L +
                        6 * (L * mla + L * h * 18432 * 3) * s + 6 * V * h * s) *
                       B;
  EXPECT_NEAR(model_flops_causal(no_mtp, B) / nemo_no_mtp, 1.0, 1e-12);
  EXPECT_NEAR(model_flops(no_mtp, B) - model_flops_causal(no_mtp, B), 3 * (192 + 128) * heads * s * s * L * B,
              1e-3);
  EXPECT_LE(model_flops_causal(m, B), hardware_flops(m, B, Recompute::none, Attention::flash));
}

// Megatron-Core MLASelfAttention (mla_ops.hpp): W_DQ and W_DKV replicated, W_UQ, W_UKV column-parallel,
// W_O row-parallel; with sequence parallelism latent-wide all-gathers instead of MHA's hidden-wide one.
TEST(Mla, TensorParallelSplitFollowsMegatronCore) {
  auto topo = podsim::testing::preset("dgx-h100-superpod");
  auto cm = h100_model(topo);
  const double T = 4096, h = 7168;
  for (bool sp : {false, true}) {
    LayerCosts one = layer_costs(read(v3_model(), 1, sp), 1, cm);
    LayerCosts two = layer_costs(read(v3_model(), 2, sp), 1, cm);
    // Up-projections and the core split by tp; the down-projections are replicated: the same work on
    // every rank without sequence parallelism, tokens/tp each with it.
    EXPECT_NEAR(op(two.forward, "MLA kv up-projection").flops,
                op(one.forward, "MLA kv up-projection").flops / 2, 1);
    EXPECT_NEAR(op(two.forward, "MLA q up-projection").flops, 2 * T * 64 * 192 * 1536, 1);
    EXPECT_NEAR(op(two.forward, "MLA flash attention forward").flops,
                op(one.forward, "MLA flash attention forward").flops / 2, 1);
    double down = op(one.forward, "MLA q down-projection (replicated)").flops;
    EXPECT_NEAR(down, 2 * T * 1536 * h, 1);
    EXPECT_NEAR(op(two.forward, "MLA q down-projection (replicated)").flops, sp ? down / 2 : down, 1);
    EXPECT_NEAR(op(two.forward, "MLA kv down-projection (replicated)").flops, (sp ? T / 2 : T) * 2 * 576 * h,
                1);
    EXPECT_TRUE(one.forward.tp.empty());
  }
  // Collectives per rank and microbatch (bytes as nccl-tests counts them, bf16).
  auto kinds = [](const PassCost& p) {
    std::vector<std::pair<network::CollectiveKind, double>> v;
    for (const auto& c : p.tp) v.push_back({c.kind, c.bytes});
    return v;
  };
  using network::CollectiveKind;
  LayerCosts sp = layer_costs(read(v3_model(), 2, true), 1, cm);
  std::vector<std::pair<CollectiveKind, double>> want = {
      {CollectiveKind::all_gather, T * 1536 * 2}, {CollectiveKind::all_gather, T * 512 * 2},
      {CollectiveKind::all_gather, T * 64 * 2},   {CollectiveKind::reduce_scatter, T * h * 2},
      {CollectiveKind::all_gather, T * h * 2},    {CollectiveKind::reduce_scatter, T * h * 2}};
  EXPECT_EQ(kinds(sp.forward), want);
  // The backward (Transformer Engine without userbuffers): the latents as MLA gathers them, then proj's
  // output gradient gathered, fc1's input re-gathered and its dgrad reduce-scattered beside its GEMMs,
  // fc2's output gradient gathered.
  std::vector<std::pair<CollectiveKind, double>> back(want.begin(), want.begin() + 3);
  for (auto kind : {CollectiveKind::all_gather, CollectiveKind::all_gather, CollectiveKind::reduce_scatter,
                    CollectiveKind::all_gather})
    back.push_back({kind, T * h * 2});
  EXPECT_EQ(kinds(sp.backward), back);
  LayerCosts ar = layer_costs(read(v3_model(), 2, false), 1, cm);
  std::vector<std::pair<CollectiveKind, double>> fwd = {{CollectiveKind::all_reduce, T * h * 2},
                                                        {CollectiveKind::all_reduce, T * h * 2}};
  std::vector<std::pair<CollectiveKind, double>> bwd = {
      {CollectiveKind::all_reduce, T * (1536 + 512 + 64) * 2}, {CollectiveKind::all_reduce, T * h * 2}};
  EXPECT_EQ(kinds(ar.forward), fwd);
  EXPECT_EQ(kinds(ar.backward), bwd);
}

// What a layer keeps for its backward (flash attention, no recomputation, tp 1, bf16): Korthikanti's
// GPT count with MLA's tensors in place of Q, K, V: Q and K of 192 and V of 128 per head, the latents
// twice (norm input and up-projection input), k_rope once.
TEST(Mla, ActivationMemoryCountsTheLatentsAndTheWiderQK) {
  WorkloadConfig w = read(v3_model());
  const double sb = 4096, h = 7168, a = 128, f = 18432;
  double replicated = sb * h * (2 * 2 + 2 * 1 + 2 * 2) + sb * ((1536 + 512) * 4 + 64 * 2);
  double split = sb * (2 * (a * (2 * 192 + 128) + 2 * f) + 2 * (a * 128 + f));
  double scores = sb * a * 4;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(w, 1, Recompute::none), replicated + split + scores);
}

TEST(Mla, MtpRunsOnTheLastStage) {
  auto topo = podsim::testing::preset("dgx-h100-superpod", {{"nodes", "2"}});
  Overrides base = {{"model.layers", "4"}, {"parallel.pp", "2"}, {"training.global_batch", "16"}};
  auto run = [&](const char* mtp) {
    Overrides sets = base;
    sets.push_back({"model.mtp_layers", mtp});
    auto model = load_workload_model(source_path(kDenseV3), sets, topo);
    return driver::simulate(topo, *model);
  };
  auto with = run("1"), without = run("0");
  ASSERT_EQ(with.status, "ok") << with.status_detail;
  ASSERT_EQ(without.status, "ok") << without.status_detail;
  EXPECT_GT(with.step_time(), without.step_time());
  EXPECT_LT(with.mfu(), 1.0);
  // Weights on the last stage only: one module per tp rank (tp 2).
  ASSERT_EQ(with.plan.memory.size(), 2u);
  EXPECT_DOUBLE_EQ(with.plan.memory[0].weights, without.plan.memory[0].weights);
  ModelConfig m = read(v3_model("  mtp_layers: 1\n")).model;
  EXPECT_NEAR(with.plan.memory[1].weights - without.plan.memory[1].weights, mtp_params(m) / 2 * 2, 1);
  EXPECT_GT(with.plan.memory[1].activations, without.plan.memory[1].activations);
  bool listed = false;
  for (const auto& k : with.plan.kernels) listed |= k.name == "MTP eh_proj (2h -> h)";
  EXPECT_TRUE(listed);
  for (const auto& s : with.stages) EXPECT_NEAR(s.total(), with.step_time(), 1e-9 * with.step_time());
}

TEST(Mla, MtpLossKeepsWhatTheMainLossKeeps) {
  // Megatron-Core's MTP heads call the model's own loss (compute_language_model_loss): with the fused loss
  // their logits keep 2 bytes each, unfused 2 + 4 + 4, as the output layer's (memory_model.cpp).
  WorkloadConfig w = read(v3_model("  mtp_layers: 2\n"));
  double unfused = mtp_activation_bytes(w, 1);
  w.training.fused_cross_entropy = true;
  double fused = mtp_activation_bytes(w, 1);
  EXPECT_NEAR(unfused - fused, 2 * 4096.0 * 129280 * 8, 1);
  EXPECT_DOUBLE_EQ(loss_bytes_per_logit(w), 2);
}

TEST(Mla, InconsistentKeysAreClearErrors) {
  auto drop = [](std::string s, const std::string& line) { return s.erase(s.find(line), line.size()); };
  std::string e = error(drop(v3_model(), "  kv_lora_rank: 512\n"));
  EXPECT_NE(e.find("model.kv_lora_rank"), std::string::npos) << e;
  EXPECT_NE(e.find("attention: mla needs"), std::string::npos) << e;
  for (const char* key : {"qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"}) {
    std::string bad =
        drop(v3_model(), fmt::format("  {}: {}\n", key, key == std::string("qk_rope_head_dim") ? 64 : 128));
    e = error(bad + fmt::format("  {}: 0\n", key));
    EXPECT_NE(e.find(fmt::format("model.{}", key)), std::string::npos) << e;
    EXPECT_NE(e.find("positive"), std::string::npos) << e;
  }
  e = error(v3_model(), 3);  // 128 heads over tp 3
  EXPECT_NE(e.find("model.heads"), std::string::npos) << e;
  e = error(v3_model("  kv_heads: 8\n"));
  EXPECT_NE(e.find("model.kv_heads"), std::string::npos) << e;
  e = error(drop(drop(v3_model(), "  attention: mla\n"), "  q_lora_rank: 1536\n"));
  EXPECT_NE(e.find("model.kv_lora_rank"), std::string::npos) << e;
  EXPECT_NE(e.find("attention: mla to use it"), std::string::npos) << e;
  e = error(drop(v3_model(), "  linear_bias: false\n"));
  EXPECT_NE(e.find("model.linear_bias"), std::string::npos) << e;
  e = error(v3_model("  mtp_layers: -1\n"));
  EXPECT_NE(e.find("model.mtp_layers"), std::string::npos) << e;
  e = error(v3_model(), 1, 2);
  EXPECT_NE(e.find("context parallelism"), std::string::npos) << e;
  std::string gqa = v3_model();
  e = error(gqa.replace(gqa.find("attention: mla"), 14, "attention: gqa"));
  EXPECT_NE(e.find("model.attention"), std::string::npos) << e;
  EXPECT_TRUE(error(v3_model()).empty()) << error(v3_model());
}
