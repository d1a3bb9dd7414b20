// MoE-layer selective recomputation (training.recompute_modules moe_act / layernorm, recompute_modules.hpp)
// and the fused cross entropy (training.cross_entropy): the stored bytes each frees, the kernels each adds
// to the recompute pass (the fused loss: the kernels it runs instead), against closed forms, and bad input;
// and the experts' fp8 quantization, split by split as Transformer Engine runs it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "podsim/core/config_node.hpp"
#include "podsim/workload/transformer/layer_ops.hpp"
#include "podsim/workload/transformer/memory_model.hpp"
#include "podsim/workload/transformer/moe_costs.hpp"
#include "podsim/workload/transformer/moe_memory.hpp"
#include "podsim/workload/transformer/recompute_modules.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::workload;
using podsim::testing::error_of;

namespace {

// 16 experts of top-2, ffn 2048 per expert, hidden 1024, seq 2048; ep 4 over tp 1 x dp 4.
struct Options {
  bool moe = true;
  std::string recompute = "selective";
  std::string modules;  // "" = key absent
  std::string precision = "bf16";
  std::string cross_entropy;  // "" = key absent
  int etp = 1;
  int tp = 1;      // > 1: with sequence parallelism, dp 4 / tp
  int shared = 0;  // shared experts of ffn 1024
};

std::string text(const Options& o) {
  std::string t =
      "name: t\nkind: transformer_lm\nmodel:\n  layers: 4\n  hidden: 1024\n  heads: 8\n  ffn_hidden: 4096\n"
      "  seq_len: 2048\n  vocab: 32000\n  mlp: swiglu\n  norm: rmsnorm\n  position_embedding: rope\n"
      "  tied_embeddings: false\n  linear_bias: false\n";
  if (o.moe) t += "moe:\n  experts: 16\n  top_k: 2\n  ffn_hidden: 2048\n";
  if (o.moe && o.shared) t += fmt::format("  shared_experts: {}\n  shared_ffn_hidden: 1024\n", o.shared);
  t += fmt::format("parallel:\n  tp: {}\n  pp: 1\n  dp: {}\n  ep: {}\n  etp: {}\n", o.tp, 4 / o.tp,
                   o.moe ? 4 / o.etp : 1, o.moe ? o.etp : 1);
  if (o.tp > 1) t += "  sequence_parallel: true\n";
  t += fmt::format("training:\n  global_batch: 64\n  attention: flash\n  precision: {}\n  recompute: {}\n",
                   o.precision, o.recompute);
  if (!o.modules.empty()) t += "  recompute_modules: " + o.modules + "\n";
  if (!o.cross_entropy.empty()) t += "  cross_entropy: " + o.cross_entropy + "\n";
  return t;
}

WorkloadConfig read(const Options& o) {
  auto root = ConfigNode::load_string(text(o), "w.yaml");
  auto w = read_transformer_workload(root, 4, 8);
  validate_transformer_workload(w, root, 4);
  return w;
}

WorkloadConfig with(const std::string& modules, const std::string& precision = "bf16", int etp = 1) {
  Options o;
  o.modules = modules;
  o.precision = precision;
  o.etp = etp;
  return read(o);
}

calibration::ComputeModel h100() {
  auto topo = podsim::testing::preset("dgx-h100-superpod");
  return calibration::ComputeModel(topo.device_profile,
                                   {.peak_flops = topo.device.peak(topology::Precision::bf16),
                                    .hbm_bandwidth = topo.device.hbm_bandwidth,
                                    .sm_count = topo.device.sm_count,
                                    .element_bytes = 2});
}

double delta(const WorkloadConfig& w, int mb = 1) {
  return moe_activation_delta(w, mb, Recompute::selective);
}

const OpCost* find_op(const PassCost& p, const std::string& name) {
  for (const auto& op : p.ops)
    if (name == op.name) return &op;
  return nullptr;
}

// moe.probs: Megatron-Core weights the expert outputs inside the activation (weighted SwiGLU), so the
// unpermute keeps no expert outputs for its backward, only each routed copy's fp32 probability; applied at
// the unpermute (older Megatron-Core, moe.probs: unpermute) every expert output is kept.
TEST(MoeRecompute, ProbabilitiesInTheActivationKeepNoExpertOutputs) {
  WorkloadConfig w = with("");
  ASSERT_EQ(w.moe.probs, MoeProbs::activation);
  WorkloadConfig old = w;
  old.moe.probs = MoeProbs::unpermute;
  double copies = 2048.0 * 2;  // tokens x top_k of one micro-batch
  EXPECT_DOUBLE_EQ(
      moe_activation_delta(old, 1, Recompute::none) - moe_activation_delta(w, 1, Recompute::none),
      copies * 1024 * 2 - copies * 4);
  std::string bad = text({});
  bad.replace(bad.find("  ffn_hidden: 2048\n"), 19, "  ffn_hidden: 2048\n  probs: router\n");
  auto e = podsim::testing::error_of(
      [&] { read_transformer_workload(ConfigNode::load_string(bad, "w.yaml"), 4, 8); });
  EXPECT_NE(e.find("moe.probs"), std::string::npos) << e;
  EXPECT_NE(e.find("activation"), std::string::npos) << e;
}

}  // namespace

TEST(MoeRecompute, MoeActFreesFc2InputOfEveryReceivedTokenCopy) {
  // 2048 tokens x top-2 copies per rank; balanced, the rank receives as many; fc2 input ffn 2048 / etp.
  for (int mb : {1, 2}) {
    double copies = 2048.0 * mb * 2;
    EXPECT_NEAR(delta(with("[core_attn]"), mb) - delta(with("[core_attn, moe_act]"), mb), copies * 2048 * 2,
                1e-3);
    // fp8: fc2's saved input is the 1-byte quantized copy
    EXPECT_NEAR(delta(with("[core_attn]", "fp8"), mb) - delta(with("[core_attn, moe_act]", "fp8"), mb),
                copies * 2048 * 1, 1e-3);
  }
  // etp 2: each rank receives twice the copies (expert-TP all-gather), of half the columns: the same bytes
  EXPECT_NEAR(moe_act_freed_bytes(with("[moe_act]", "bf16", 2), 1), 2048.0 * 2 * 2 * 1024 * 2, 1e-3);
  EXPECT_DOUBLE_EQ(moe_act_freed_bytes(with("[core_attn]"), 1), 0);
}

TEST(MoeRecompute, LayernormFreesThePreMlpNormOutput) {
  double routed = 2048, h = 1024;
  EXPECT_NEAR(delta(with("[core_attn]")) - delta(with("[core_attn, layernorm]")), routed * h * 2, 1e-3);
  EXPECT_NEAR(moe_norm_freed_bytes(with("[layernorm]", "fp8"), 2), 2 * routed * h * 2, 1e-3);  // 16-bit
  // Both at once free the sum, and the backward holds them again once (the working set).
  auto both = with("[layernorm, moe_act]");
  EXPECT_NEAR(delta(with("[core_attn]")) - delta(both), routed * h * 2 + 2 * routed * 2048 * 2, 1e-3);
  EXPECT_DOUBLE_EQ(moe_recompute_working_bytes(both, 1),
                   moe_act_freed_bytes(both, 1) + moe_norm_freed_bytes(both, 1));
  // Without selective recomputation nothing is freed (recompute: none ignores the list's modules).
  EXPECT_DOUBLE_EQ(moe_activation_delta(both, 1, Recompute::none),
                   moe_activation_delta(with("[core_attn]"), 1, Recompute::none));
}

// A MoE layer with shared experts keeps the dense MLP's TP collectives (the shared experts' all-gather and
// reduce-scatter); they hide behind the shared experts' GEMMs, 1024 of the dense 4096 columns here, not
// behind the dense MLP's.
TEST(MoeRecompute, SharedExpertCollectivesHideBehindTheSharedExpertGemms) {
  auto cm = h100();
  Options o;
  o.recompute = "none";
  o.tp = 2;
  o.shared = 1;
  WorkloadConfig w = read(o);
  LayerCosts dense = layer_costs(w, 1, cm);
  MoeLayerCosts moe = moe_layer_costs(w, 1, cm, dense);
  int compared = 0;
  for (auto [d, m] :
       {std::pair{&dense.forward, &moe.layer.forward}, std::pair{&dense.backward, &moe.layer.backward}}) {
    std::vector<double> want, got;
    for (const auto& c : d->tp)
      if (c.mlp) want.push_back(c.overlap_seconds * 1024 / 4096);
    for (const auto& c : m->tp)
      if (c.mlp) got.push_back(c.overlap_seconds);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i, ++compared) EXPECT_NEAR(got[i], want[i], 1e-15);
  }
  EXPECT_GT(compared, 0);
}

TEST(MoeRecompute, RecomputePassGainsTheActivationAndNormKernels) {
  auto cm = h100();
  auto cost = [&](const WorkloadConfig& w) {
    LayerCosts dense = layer_costs(w, 1, cm);
    return moe_layer_costs(w, 1, cm, dense).layer.recompute;
  };
  PassCost base = cost(with("[core_attn]"));
  PassCost act = cost(with("[core_attn, moe_act]"));
  PassCost norm = cost(with("[core_attn, layernorm]"));
  EXPECT_EQ(find_op(base, "MoE expert activation (recompute)"), nullptr);
  const OpCost* a = find_op(act, "MoE expert activation (recompute)");
  ASSERT_NE(a, nullptr);
  EXPECT_NEAR(a->bytes, 3 * (2048.0 * 2) * 2048 * 2, 1e-3);  // SwiGLU reads gate + up, writes the output
  const OpCost* n = find_op(norm, "MoE pre-MLP norm (recompute)");
  ASSERT_NE(n, nullptr);
  EXPECT_NEAR(n->bytes, 2 * 2048.0 * 1024 * 2, 1e-3);
  EXPECT_NEAR(act.seconds - base.seconds, a->seconds, 1e-12);
  EXPECT_NEAR(norm.seconds - base.seconds, n->seconds, 1e-12);
  EXPECT_DOUBLE_EQ(act.flops, base.flops);  // element-wise: no GEMM FLOPs
  // fp8 adds the re-quantization of fc2's input
  EXPECT_NE(find_op(cost(with("[moe_act]", "fp8")), "MoE fc2 input quantize (fp8, recompute)"), nullptr);
}

TEST(MoeRecompute, FusedCrossEntropyKeepsOnlyTheLogits) {
  auto topo = podsim::testing::preset("dgx-h100-superpod");
  Options o;
  o.modules = "[core_attn]";
  auto unfused = stage_memory(read(o), 1, 1, {1}, topo.device_profile);
  o.cross_entropy = "fused";
  auto fused = stage_memory(read(o), 1, 1, {1}, topo.device_profile);
  // one microbatch's 2048 x 32000 logits lose their two fp32 copies (softmax, exp) of 4 bytes each
  EXPECT_NEAR(unfused[0].activations - fused[0].activations, 2048.0 * 32000 * 8, 1.0);
  o.cross_entropy = "unfused";
  EXPECT_DOUBLE_EQ(stage_memory(read(o), 1, 1, {1}, topo.device_profile)[0].activations,
                   unfused[0].activations);
}

TEST(MoeRecompute, FusedCrossEntropyKernelsMoveOnlySixteenBitLogits) {
  // Transformer Engine's parallel_cross_entropy: the forward reads the 2048 x 32000 16-bit logits twice and
  // writes the gradient over them, the backward scales it in place; unfused, the fp32 passes (head_ops.cpp).
  auto cm = h100();
  Options o;
  o.moe = false;
  auto head = [&](const std::string& ce) {
    o.cross_entropy = ce;
    return head_costs(read(o), 1, cm);
  };
  HeadCosts fused = head("fused"), unfused = head("unfused");
  double logits = 2048.0 * 32000;
  const OpCost* f = find_op(fused.output_forward, "cross-entropy (fused: online softmax, loss and gradient)");
  const OpCost* b = find_op(fused.output_backward, "cross-entropy backward (fused: scale the gradient)");
  ASSERT_NE(f, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NEAR(f->bytes, logits * 3 * 2, 1e-3);
  EXPECT_NEAR(b->bytes, logits * 2 * 2, 1e-3);
  EXPECT_EQ(find_op(fused.output_forward, "cross-entropy (fp32)"), nullptr);
  const OpCost* uf = find_op(unfused.output_forward, "cross-entropy (fp32)");
  const OpCost* ub = find_op(unfused.output_backward, "cross-entropy backward");
  ASSERT_NE(uf, nullptr);
  ASSERT_NE(ub, nullptr);
  EXPECT_NEAR(uf->bytes, logits * (2 + 4 + 4 + 8 + 4 + 8), 1e-3);
  // Everything else in the head is the same: the difference is the loss kernels' time alone.
  EXPECT_NEAR(unfused.output_forward.seconds - fused.output_forward.seconds, uf->seconds - f->seconds, 1e-12);
  EXPECT_NEAR(unfused.output_backward.seconds - fused.output_backward.seconds, ub->seconds - b->seconds,
              1e-12);
  EXPECT_LT(fused.output_forward.seconds + fused.output_backward.seconds,
            unfused.output_forward.seconds + unfused.output_backward.seconds);
  EXPECT_TRUE(fused.output_forward.tp.empty());  // tp 1: no per-row statistics to exchange
}

TEST(MoeRecompute, BadInputIsAClearError) {
  auto err = [](Options o) { return error_of([&] { read(o); }); };
  Options o;
  o.moe = false;
  o.modules = "[core_attn, moe_act]";
  std::string e = err(o);
  EXPECT_NE(e.find("'moe_act' acts on MoE layers only"), std::string::npos) << e;
  EXPECT_NE(e.find("w.yaml:"), std::string::npos) << e;
  o.modules = "[layernorm]";
  EXPECT_NE(err(o).find("'layernorm' acts on MoE layers only"), std::string::npos);
  o.moe = true;
  o.recompute = "none";
  EXPECT_NE(err(o).find("needs training.recompute: selective"), std::string::npos);
  o.recompute = "selective";
  o.modules = "[shared_experts]";
  EXPECT_NE(err(o).find("not modelled by podsim yet"), std::string::npos);
  o.modules = "[layernorm, moe_act]";
  EXPECT_EQ(err(o), "");
  o.cross_entropy = "fast";
  e = err(o);
  EXPECT_NE(e.find("cross_entropy"), std::string::npos) << e;
  EXPECT_NE(e.find("fused"), std::string::npos) << e;
}

// Transformer Engine's GroupedLinear quantizes each local expert's split on its own except under delayed
// scaling (one fused multi-tensor kernel): current scaling three kernels per split (amax, scale, cast),
// MXFP8 one. Same bytes: the difference is the kernels' overhead.
TEST(MoeFp8, EachExpertsSplitIsQuantizedOnItsOwn) {
  auto cm = h100();
  auto kernels = [&](const std::string& precision, const std::string& recipe) {
    Options o;
    o.recompute = "none";
    o.precision = precision;
    std::string t = text(o);
    if (!recipe.empty()) t.replace(t.find("  recompute:"), 0, "  fp8_recipe: " + recipe + "\n");
    auto root = ConfigNode::load_string(t, "w.yaml");
    auto w = read_transformer_workload(root, 4, 8);
    auto m = moe_layer_costs(w, 1, cm, layer_costs(w, 1, cm));
    const OpCost* op = find_op(m.layer.forward, "MoE expert input quantize (fp8)");
    EXPECT_NE(op, nullptr) << precision << " " << recipe;
    if (!op) return 0.0;
    return (op->seconds - memory_cost(cm, "one kernel", op->bytes).seconds) / cm.kernel_overhead() + 1;
  };
  // 16 experts over ep 4: 4 local experts.
  EXPECT_NEAR(kernels("fp8", "delayed"), 1, 1e-9);
  EXPECT_NEAR(kernels("fp8", "current"), 3 * 4, 1e-9);
  EXPECT_NEAR(kernels("mxfp8", ""), 4, 1e-9);
}
