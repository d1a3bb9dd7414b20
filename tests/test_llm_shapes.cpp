// Llama-class model shapes: parameter counts against the published model sizes, model FLOPs against
// NVIDIA NeMo's formulas (/work/shared/validation/nvidia-model-flops.md), GQA/SwiGLU kernels and memory,
// FP8 activation bytes, and the errors for shapes Megatron-Core cannot run.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "podsim/core/config_node.hpp"
#include "podsim/workload/transformer/memory_model.hpp"
#include "podsim/workload/transformer/model_checks.hpp"
#include "podsim/workload/transformer/precision_bytes.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::workload;
using podsim::testing::error_of;
using podsim::testing::source_path;

namespace {

ModelConfig preset_model(const std::string& name) {
  auto root = ConfigNode::load_file(source_path("workloads/" + name + ".yaml"));
  return read_model_section(root.child("model"), name);
}

WorkloadConfig read(const std::string& model_yaml, int tp = 1, const std::string& precision = "bf16") {
  std::string text =
      "name: t\nkind: transformer_lm\nmodel:\n" + model_yaml +
      fmt::format("parallel:\n  tp: {}\n  pp: 1\n  dp: 1\ntraining:\n  global_batch: 8\n  precision: {}\n",
                  tp, precision);
  return read_transformer_workload(ConfigNode::load_string(text, "w.yaml"), 64, 8);
}

const char* kLlama3_8b =
    "  layers: 32\n  hidden: 4096\n  heads: 32\n  kv_heads: 8\n  ffn_hidden: 14336\n  seq_len: 8192\n"
    "  vocab: 128256\n  mlp: swiglu\n  norm: rmsnorm\n  position_embedding: rope\n  tied_embeddings: false\n"
    "  linear_bias: false\n";

}  // namespace

// Published sizes, rounded as published; the count must round to the same figure.
TEST(LlmShapes, ParameterCountsMatchPublishedSizes) {
  struct Case {
    const char* preset;
    double published_billion, half_last_digit;
  } cases[] = {{"llama3-8b", 8.03, 0.005}, {"llama3-70b", 70.6, 0.05}, {"llama3.1-405b", 405.9, 0.05},
               {"llama2-7b", 6.74, 0.005}, {"llama2-70b", 69.0, 0.05}, {"nemotron4-340b", 341, 0.5}};
  for (const auto& c : cases)
    EXPECT_NEAR(total_params(preset_model(c.preset)) / 1e9, c.published_billion, c.half_last_digit)
        << c.preset;
}

TEST(LlmShapes, Llama3_8bParametersByPart) {
  ModelConfig m = preset_model("llama3-8b");
  double h = 4096, d = 128;
  // Q and O: 2 h^2; K, V: 2 h g d with g = 8; SwiGLU: 3 h f; two RMSNorms: 2h.
  EXPECT_DOUBLE_EQ(layer_params(m), 2 * h * h + 2 * h * 8 * d + 3 * h * 14336 + 2 * h);
  EXPECT_DOUBLE_EQ(embedding_params(m), 128256 * h);     // RoPE: no position table
  EXPECT_DOUBLE_EQ(output_layer_params(m), 128256 * h);  // untied
  m.tied_embeddings = true;
  EXPECT_DOUBLE_EQ(output_layer_params(m), 0);
  m.linear_bias = true;  // QKV (a + 2g) d, out h, fc1 2f, fc2 h
  EXPECT_DOUBLE_EQ(layer_params(m) - (2 * h * h + 2 * h * 8 * d + 3 * h * 14336 + 2 * h),
                   (32 + 16) * d + h + 2 * 14336 + h);
}

// NeMo's llama formula: B s L h^2 (12 + 12 g/a + 18 f/h + 12 (s/h) 0.5 + 6 V/(L h)). It ignores biases and
// norms, as podsim's FLOP count does, and assumes a*d = h (true for every preset here): exact agreement.
TEST(LlmShapes, CausalFlopsAreNvidiaLlamaFormula) {
  for (const char* name : {"llama3-8b", "llama3-70b", "llama3.1-405b", "llama2-7b", "llama2-70b"}) {
    ModelConfig m = preset_model(name);
    double B = 128, s = m.seq_len, L = m.layers, h = m.hidden, a = m.heads, g = m.kv_heads, f = m.ffn_hidden,
           V = m.vocab;
    double nvidia = B * s * L * h * h * (12 + 12 * g / a + 18 * f / h + 12 * s / h * 0.5 + 6 * V / (L * h));
    EXPECT_NEAR(model_flops_causal(m, B) / nvidia, 1.0, 1e-12) << name;
    EXPECT_LT(model_flops_causal(m, B), model_flops(m, B));
  }
}

TEST(LlmShapes, CausalFlopsAreNvidiaNemotronAndGpt3Formulas) {
  for (const char* name : {"nemotron4-340b", "nemotron4-15b", "nemotron-8b", "nemotron-22b"}) {
    ModelConfig m = preset_model(name);
    double B = 32, s = m.seq_len, L = m.layers, h = m.hidden, a = m.heads, g = m.kv_heads, f = m.ffn_hidden,
           V = m.vocab;
    double nvidia = B * s * L * h * h * (12 + 12 * g / a + 12 * f / h + 12 * s / h * 0.5 + 6 * V / (L * h));
    EXPECT_NEAR(model_flops_causal(m, B) / nvidia, 1.0, 1e-12) << name;
  }
  for (const char* name : {"gpt3-5b", "gpt3-20b", "gpt3-175b"}) {
    ModelConfig m = preset_model(name);
    double B = 256, s = m.seq_len, L = m.layers, h = m.hidden, V = m.vocab;
    double nvidia = (24 * B * s * h * h + 4 * B * s * s * h * 0.5) * 3 * L + 6 * B * s * h * V;
    EXPECT_NEAR(model_flops_causal(m, B) / nvidia, 1.0, 1e-12) << name;
    // The non-causal count (mfu's) is SC21 Eq. 3 without recomputation: 72 B s l h^2 (1 + s/(6h) + V/(12lh)).
    double eq3 = 72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h));
    EXPECT_NEAR(model_flops(m, B) / eq3, 1.0, 1e-12) << name;
  }
}

TEST(LlmShapes, DefaultsAreGpt3AndDerivedKeysFollowHidden) {
  auto w = read("  layers: 2\n  hidden: 64\n  heads: 4\n  seq_len: 16\n  vocab: 128\n");
  EXPECT_EQ(w.model.kv_heads, 4);
  EXPECT_EQ(w.model.head_dim, 16);
  EXPECT_EQ(w.model.ffn_hidden, 256);
  EXPECT_EQ(w.model.mlp, Mlp::gelu);
  EXPECT_EQ(w.model.norm, Norm::layernorm);
  EXPECT_TRUE(w.model.tied_embeddings && w.model.linear_bias);
  EXPECT_EQ(w.model.position_embedding, PositionEmbedding::learned);
}

TEST(LlmShapes, BadShapesAreClearErrors) {
  std::string base = "  layers: 2\n  hidden: 64\n  heads: 8\n  seq_len: 16\n  vocab: 128\n";
  std::string e = error_of([&] { read(base + "  kv_heads: 3\n"); });
  EXPECT_NE(e.find("kv_heads=3 must divide heads=8"), std::string::npos) << e;
  EXPECT_NE(e.find("w.yaml:"), std::string::npos) << e;
  e = error_of([&] { read(base + "  kv_heads: 2\n", 4); });
  EXPECT_NE(e.find("num_query_groups % tp == 0"), std::string::npos) << e;
  EXPECT_NE(e.find("valid tp: 1, 2"), std::string::npos) << e;
  EXPECT_TRUE(error_of([&] { read(base + "  kv_heads: 2\n", 2); }).empty());
  e = error_of([&] { read(base + "  mlp: relu\n"); });
  EXPECT_NE(e.find("swiglu"), std::string::npos) << e;
  e = error_of([&] { read(base + "  norm: batchnorm\n"); });
  EXPECT_NE(e.find("rmsnorm"), std::string::npos) << e;
  e = error_of([&] { read("  layers: 2\n  hidden: 60\n  heads: 8\n  seq_len: 16\n  vocab: 128\n"); });
  EXPECT_NE(e.find("head_dim"), std::string::npos) << e;
  // An explicit head_dim may make the attention width differ from hidden, as Megatron's kv_channels does.
  EXPECT_TRUE(error_of([&] {
                read("  layers: 2\n  hidden: 60\n  heads: 8\n  head_dim: 8\n  seq_len: 16\n  vocab: 128\n");
              }).empty());
}

TEST(LlmShapes, OverrideOfHiddenWarnsAboutExplicitFfnHidden) {
  auto root = ConfigNode::load_file(source_path("workloads/gpt3-175b.yaml"));
  root.apply_override("model.hidden", "6144", "--set workload.model.hidden=6144");
  ModelConfig m = read_model_section(root.child("model"), "x");
  std::string out;
  for (const auto& warning : inconsistent_derived_keys(root.child("model"), m)) out += warning + "\n";
  EXPECT_NE(out.find("model.ffn_hidden: 49152 is kept"), std::string::npos) << out;
  EXPECT_NE(out.find("24576"), std::string::npos) << out;
  // overriding both keeps them consistent: no warning
  root.apply_override("model.ffn_hidden", "24576", "--set workload.model.ffn_hidden=24576");
  m = read_model_section(root.child("model"), "x");
  EXPECT_TRUE(inconsistent_derived_keys(root.child("model"), m).empty());
}

// Korthikanti et al. Sec. 4.1 for GPT (34 sbh + 5 a s^2 b at 16 bits); generalized per stored tensor.
TEST(LlmShapes, ActivationBytesKeepKorthikantiForGptAndFollowGqaSwiglu) {
  auto w = read("  layers: 2\n  hidden: 64\n  heads: 8\n  seq_len: 16\n  vocab: 128\n", 2);
  double s = 16, b = 1, h = 64, a = 8, t = 2;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(w, 1, Recompute::none),
                   s * b * h * (10 + 24 / t + 5 * a * s / (h * t)));
  EXPECT_DOUBLE_EQ(layer_activation_bytes(w, 1, Recompute::selective), s * b * h * (10 + 24 / t));
  auto l = read(kLlama3_8b, 2);
  double H = 4096, S = 8192, d = 128, f = 14336;
  double split =
      S * 2 * ((32 + 16) * d + 32 * d + 2 * f + f);  // Q K V, O input, SwiGLU input (2f), fc2 input
  double replicated = S * H * (2 * 2 + 2 + 2 * 2);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(l, 1, Recompute::selective), replicated + split / 2);
}

// Transformer Engine's FP8 is a GEMM format: activations stay bf16, weights gain a 1-byte copy.
TEST(LlmShapes, Fp8KeepsActivationsInBf16) {
  auto bf16 = read(kLlama3_8b, 1, "bf16");
  auto fp8 = read(kLlama3_8b, 1, "fp8");
  EXPECT_TRUE(is_fp8_family(fp8.training.precision));
  EXPECT_DOUBLE_EQ(activation_bytes(fp8.training), 2);
  EXPECT_DOUBLE_EQ(weight_bytes(fp8.training), 4);  // + fp8 and its transpose (Hopper-like: no topology)
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(fp8.training), 4);
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(bf16.training), 0);
  EXPECT_DOUBLE_EQ(fp8.training.grad_reduce_bytes, 2);
  // The four GEMM inputs a layer saves are kept as their fp8 copies: 1 byte less per element each.
  double S = 8192, H = 4096, f = 14336, ad = 32 * 128;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(bf16, 1, Recompute::selective) -
                       layer_activation_bytes(fp8, 1, Recompute::selective),
                   S * (2 * H + ad + f));
}

// The Cerebras models cost the GPT layer only: a Llama key there is an error naming it, not ignored.
TEST(LlmShapes, WaferModelsRejectKeysTheyDoNotModel) {
  std::string text = std::string("model:\n") + kLlama3_8b;
  auto root = ConfigNode::load_string(text, "w.yaml");
  ModelConfig m = read_model_section(root.child("model"), "x");
  std::string e = error_of([&] { require_gpt_layer(m, root.child("model"), "Cerebras"); });
  EXPECT_NE(e.find("model.kv_heads"), std::string::npos) << e;
  EXPECT_NE(e.find("Cerebras"), std::string::npos) << e;
  auto gpt = ConfigNode::load_string(
      "model:\n  layers: 2\n  hidden: 64\n  heads: 4\n  seq_len: 16\n  vocab: 128\n", "g.yaml");
  ModelConfig g = read_model_section(gpt.child("model"), "g");
  EXPECT_TRUE(error_of([&] { require_gpt_layer(g, gpt.child("model"), "Cerebras"); }).empty());
}
