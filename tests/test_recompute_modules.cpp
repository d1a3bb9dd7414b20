// training.recompute_modules (Megatron-Core's selective recomputation by module, recompute_modules.hpp):
// each module's stored activations leave the memory model by their closed form, its forward kernels join
// the recompute pass (and hardware_flops) exactly, the default is today's core_attn, and bad input fails.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "podsim/core/config_node.hpp"
#include "podsim/workload/transformer/layer_ops.hpp"
#include "podsim/workload/transformer/memory_model.hpp"
#include "podsim/workload/transformer/mla_math.hpp"
#include "podsim/workload/transformer/moe_math.hpp"
#include "podsim/workload/transformer/recompute_modules.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::workload;
using podsim::testing::error_of;

namespace {

// DeepSeek-V3's attention and dense MLP shape (every layer dense, no MTP).
const char* kMla =
    "  layers: 61\n  hidden: 7168\n  heads: 128\n  ffn_hidden: 18432\n  seq_len: 4096\n  vocab: 129280\n"
    "  mlp: swiglu\n  norm: rmsnorm\n  position_embedding: rope\n  tied_embeddings: false\n"
    "  linear_bias: false\n  attention: mla\n  q_lora_rank: 1536\n  kv_lora_rank: 512\n"
    "  qk_nope_head_dim: 128\n  qk_rope_head_dim: 64\n  v_head_dim: 128\n";
const char* kMha =
    "  layers: 4\n  hidden: 1024\n  heads: 16\n  ffn_hidden: 4096\n  seq_len: 2048\n  vocab: 32000\n";

struct Options {
  std::string model = kMla;
  std::string recompute = "selective";
  std::string modules;  // YAML list text, "" = key absent
  std::string precision = "bf16";
  int cp = 1;
};

WorkloadConfig read(const Options& o) {
  std::string text = "name: t\nkind: transformer_lm\nmodel:\n" + o.model +
                     fmt::format(
                         "parallel:\n  tp: 2\n  pp: 1\n  dp: 1\n  cp: {}\n  sequence_parallel: true\n"
                         "training:\n  global_batch: 8\n  attention: flash\n  precision: {}\n"
                         "  recompute: {}\n",
                         o.cp, o.precision, o.recompute);
  if (!o.modules.empty()) text += "  recompute_modules: " + o.modules + "\n";
  auto root = ConfigNode::load_string(text, "w.yaml");
  auto w = read_transformer_workload(root, 64, 8);
  validate_transformer_workload(w, root, 64);
  return w;
}

WorkloadConfig with(const std::string& modules, const std::string& precision = "bf16") {
  Options o;
  o.modules = modules;
  o.precision = precision;
  return read(o);
}

calibration::ComputeModel h100(const topology::Topology& topo) {
  return calibration::ComputeModel(topo.device_profile,
                                   {.peak_flops = topo.device.peak(topology::Precision::bf16),
                                    .hbm_bandwidth = topo.device.hbm_bandwidth,
                                    .sm_count = topo.device.sm_count,
                                    .element_bytes = 2});
}

double stored(const WorkloadConfig& w) {
  return layer_activation_bytes(w, 1, w.training.recompute);
}

// Per rank and microbatch of one sequence: tokens s, tp 2 with sequence parallelism.
constexpr double s = 4096, h = 7168, f = 18432, a = 128, t = 2, qk = 192, v = 128, lat = 1536 + 512;

}  // namespace

TEST(RecomputeModules, DefaultIsCoreAttentionAndKeepsTodaysResults) {
  WorkloadConfig def = with("");
  EXPECT_TRUE(def.training.recompute_modules.core_attn);
  EXPECT_FALSE(def.training.recompute_modules.mla_up_proj || def.training.recompute_modules.mlp);
  WorkloadConfig explicit_default = with("[core_attn]");
  EXPECT_DOUBLE_EQ(stored(def), stored(explicit_default));
  // No core_attn: flash's fp32 logsumexp per query row and head stays stored, the core is not rerun.
  WorkloadConfig none = with("[mlp]"), both = with("[core_attn, mlp]");
  EXPECT_NEAR(stored(none) - stored(both), s * a * 4 / t, 1e-6);
  auto cm = h100(podsim::testing::preset("dgx-h100-superpod"));
  double core = layer_costs(def, 1, cm).recompute.flops;
  EXPECT_GT(core, 0);
  EXPECT_NEAR(layer_costs(both, 1, cm).recompute.flops - layer_costs(none, 1, cm).recompute.flops, core,
              core * 1e-12);
}

// Stored bytes drop by exactly the module's tensors (memory_model.cpp's closed form).
TEST(RecomputeModules, MemoryDropsByTheModulesActivations) {
  for (std::string precision : {"bf16", "fp8"}) {
    double ab = 2, gemm_in = precision == "fp8" ? 1 : 2;
    WorkloadConfig base = with("[core_attn]", precision);
    // mlp: fc1 input (sequence-parallel shard), SwiGLU input (2f) and fc2 input, split over tp.
    double mlp = s * h * gemm_in / t + s * (ab * 2 * f + gemm_in * f) / t;
    EXPECT_NEAR(stored(base) - stored(with("[core_attn, mlp]", precision)), mlp, 1e-3) << precision;
    // mla_up_proj: the core's Q, K (qk each) and V per head freed; the checkpoint's bf16 latents replace
    // the up-projections' saved (fp8: 1-byte) inputs.
    double up = s * ab * a * (2 * qk + v) / t - s * lat * (ab - gemm_in) / t;
    EXPECT_NEAR(stored(base) - stored(with("[core_attn, mla_up_proj]", precision)), up, 1e-3) << precision;
    // What is not stored is rebuilt once for the layer whose backward runs.
    WorkloadConfig all = with("[core_attn, mla_up_proj, mlp]", precision);
    EXPECT_NEAR(recompute_working_bytes(all, 1, Recompute::selective) -
                    recompute_working_bytes(base, 1, Recompute::selective),
                mlp + up, 1e-3);
  }
}

// The recompute pass gains exactly the module's forward GEMMs (and its kernels by name).
TEST(RecomputeModules, RecomputePassGainsTheModulesForwardKernels) {
  auto cm = h100(podsim::testing::preset("dgx-h100-superpod"));
  LayerCosts base = layer_costs(with("[core_attn]"), 1, cm);
  LayerCosts up = layer_costs(with("[core_attn, mla_up_proj]"), 1, cm);
  LayerCosts mlp = layer_costs(with("[core_attn, mlp]"), 1, cm);
  double up_flops = 2 * s * (1536 * a / t * qk + 512 * a / t * (128 + v));
  double mlp_flops = 2 * s * (h * 2 * f / t + f / t * h);
  EXPECT_NEAR(up.recompute.flops - base.recompute.flops, up_flops, up_flops * 1e-12);
  EXPECT_NEAR(mlp.recompute.flops - base.recompute.flops, mlp_flops, mlp_flops * 1e-12);
  EXPECT_TRUE(base.recompute.tp.empty());  // the attention core and the up-projections are rank-local
  EXPECT_TRUE(up.recompute.tp.empty());
  ASSERT_EQ(mlp.recompute.tp.size(), 2u);  // the MLP's sequence-parallel all-gather and reduce-scatter
  EXPECT_EQ(mlp.recompute.tp[0].kind, network::CollectiveKind::all_gather);
  EXPECT_EQ(mlp.recompute.tp[1].kind, network::CollectiveKind::reduce_scatter);
  // The same kernels as the forward's, one for one.
  for (const auto& op : up.recompute.ops)
    if (std::string(op.name) == "MLA kv up-projection")
      for (const auto& fwd : up.forward.ops)
        if (std::string(fwd.name) == op.name) {
          EXPECT_DOUBLE_EQ(op.seconds, fwd.seconds);
        }
  // A recomputed forward never costs more than the forward itself.
  LayerCosts all = layer_costs(with("[core_attn, mla_up_proj, mlp]"), 1, cm);
  EXPECT_LT(all.recompute.flops, all.forward.flops);
  // hardware_flops counts the same work: per rank x tp x microbatches x layers.
  WorkloadConfig w = with("[core_attn, mla_up_proj, mlp]");
  double B = 8;
  EXPECT_NEAR(selective_recompute_flops_delta(w, B, 0),
              (all.recompute.flops - base.recompute.flops) * t * B * 61, 1e3);
  EXPECT_NEAR(moe_hardware_flops(w, B) - moe_hardware_flops(with("[core_attn]"), B),
              selective_recompute_flops_delta(w, B, 0), 1e3);
}

TEST(RecomputeModules, BadInputIsAClearError) {
  auto err = [](Options o) { return error_of([&] { read(o); }); };
  Options o;
  o.modules = "[core_attn, attn_core]";
  std::string e = err(o);
  EXPECT_NE(e.find("unknown recompute module 'attn_core'"), std::string::npos) << e;
  EXPECT_NE(e.find("core_attn, mla_up_proj, mlp"), std::string::npos) << e;
  EXPECT_NE(e.find("w.yaml:"), std::string::npos) << e;
  o.modules = "[moe]";
  e = err(o);
  EXPECT_NE(e.find("not modelled by podsim yet"), std::string::npos) << e;
  o.modules = "[]";
  EXPECT_NE(err(o).find("empty list"), std::string::npos);
  o.modules = "mlp";
  EXPECT_NE(err(o).find("must be a list"), std::string::npos);
  o.modules = "[mlp]";
  o.recompute = "full";
  e = err(o);
  EXPECT_NE(e.find("needs training.recompute: selective"), std::string::npos) << e;
  o.recompute = "selective";
  o.model = kMha;
  o.modules = "[core_attn, mla_up_proj]";
  e = err(o);
  EXPECT_NE(e.find("needs model.attention: mla"), std::string::npos) << e;
  o.modules = "[mlp]";
  o.cp = 2;
  e = err(o);
  EXPECT_NE(e.find("add core_attn"), std::string::npos) << e;
  o.modules = "[core_attn, mlp]";
  EXPECT_EQ(err(o), "");
}

// --set training.recompute=full (or none) on a file whose selective recomputation names modules: the list
// goes unused with a warning, as Megatron-LM ignores --recompute-modules without selective granularity; a
// file that states both, or a --set of the list itself, stays an error.
TEST(RecomputeModules, ASetRecomputeLeavesTheFilesListUnused) {
  std::string text = std::string("name: t\nkind: transformer_lm\nmodel:\n") + kMha +
                     "parallel:\n  tp: 2\n  pp: 1\n  dp: 1\n  sequence_parallel: true\n"
                     "training:\n  global_batch: 8\n  attention: flash\n  recompute: selective\n"
                     "  recompute_modules: [mlp]\n";
  for (const char* mode : {"full", "none"}) {
    auto root = ConfigNode::load_string(text, "w.yaml");
    root.apply_override("training.recompute", mode,
                        fmt::format("--set workload.training.recompute={}", mode));
    WorkloadConfig w = read_transformer_workload(root, 64, 8);
    ASSERT_EQ(w.warnings.size(), 1u);
    const std::string& warned = w.warnings[0];
    EXPECT_EQ(to_string(w.training.recompute), std::string(mode));
    EXPECT_NE(warned.find("w.yaml:"), std::string::npos) << warned;
    EXPECT_NE(warned.find("unused"), std::string::npos) << warned;
  }
  auto root = ConfigNode::load_string(text, "w.yaml");
  root.apply_override("training.recompute", "full", "--set workload.training.recompute=full");
  root.apply_override("training.recompute_modules", "[core_attn]",
                      "--set workload.training.recompute_modules=[core_attn]");
  std::string e = error_of([&] { read_transformer_workload(root, 64, 8); });
  EXPECT_NE(e.find("needs training.recompute: selective"), std::string::npos) << e;
}
