// --hf-config: HuggingFace config.json files (tests/data/hf, provenance in its README) give the same
// model as the shipped presets (every shape field and the parameter counts), the reader's errors and
// warnings name the field, and the imported overrides sit between the workload file and --set.
#include <gtest/gtest.h>

#include "podsim/core/config_node.hpp"
#include "podsim/driver/hf_config.hpp"
#include "podsim/driver/job_import.hpp"
#include "podsim/workload/transformer/moe_math.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::workload;
using podsim::testing::error_of;
using podsim::testing::source_path;

namespace {

// The workload the CLI would load: `file` with the imported overrides applied (prefix "workload." off).
// On 8 devices (the presets' dp: auto then fills one server; the MoE presets state their layouts).
WorkloadConfig with_overrides(const std::string& file, const std::vector<std::string>& sets,
                              int devices = 8) {
  ConfigNode root = ConfigNode::load_file(source_path(file));
  for (const auto& s : sets) {
    auto eq = s.find('=');
    root.apply_override(s.substr(9, eq - 9), s.substr(eq + 1), s);
  }
  return read_transformer_workload(root, devices, 8);
}

// The presets' pipeline layouts need the loader's uneven split (DeepSeek-V3); the parameters do not
// depend on the layout.
const std::vector<std::string> kOnePipelineStage = {
    "workload.parallel.pp=1", "workload.parallel.schedule=1f1b", "workload.parallel.virtual_stages=1"};

std::string joined(const std::vector<std::string>& lines) {
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  return all;
}

bool has_set(const driver::JobImport& imp, const std::string& set) {
  return std::find(imp.sets.begin(), imp.sets.end(), set) != imp.sets.end();
}

}  // namespace

TEST(HfConfig, ModelCardsGiveThePresetsModels) {
  struct Case {
    const char *json, *preset;
  } cases[] = {{"llama3-8b", "llama3-8b"},       {"llama3-70b", "llama3-70b"},
               {"mixtral-8x7b", "mixtral-8x7b"}, {"qwen3-30b-a3b", "qwen3-30b-a3b"},
               {"deepseek-v3", "deepseek-v3"},   {"mistral-7b", "mistral-7b"}};
  for (const auto& c : cases) {
    auto imp = driver::read_hf_config(source_path(std::string("tests/data/hf/") + c.json + ".json"));
    WorkloadConfig got = with_overrides("workloads/base-llm.yaml", imp.sets);
    WorkloadConfig want =
        with_overrides(std::string("workloads/") + c.preset + ".yaml", kOnePipelineStage, 1024);
    const ModelConfig &g = got.model, &w = want.model;
    EXPECT_EQ(g.layers, w.layers) << c.json;
    EXPECT_EQ(g.hidden, w.hidden) << c.json;
    EXPECT_EQ(g.heads, w.heads) << c.json;
    EXPECT_EQ(g.kv_heads, w.kv_heads) << c.json;
    EXPECT_EQ(g.head_dim, w.head_dim) << c.json;
    EXPECT_EQ(g.vocab, w.vocab) << c.json;
    EXPECT_EQ(g.mlp, w.mlp) << c.json;
    EXPECT_EQ(g.norm, w.norm) << c.json;
    EXPECT_EQ(g.tied_embeddings, w.tied_embeddings) << c.json;
    EXPECT_EQ(g.linear_bias, w.linear_bias) << c.json;
    EXPECT_EQ(g.position_embedding, w.position_embedding) << c.json;
    EXPECT_EQ(g.attention_type, w.attention_type) << c.json;
    EXPECT_EQ(g.mtp_layers, w.mtp_layers) << c.json;
    EXPECT_EQ(g.sliding_window, w.sliding_window) << c.json;
    EXPECT_EQ(g.full_attention_every, w.full_attention_every) << c.json;
    EXPECT_EQ(got.moe.experts, want.moe.experts) << c.json;
    EXPECT_EQ(got.moe.top_k, want.moe.top_k) << c.json;
    EXPECT_EQ(got.moe.first_dense_layers, want.moe.first_dense_layers) << c.json;
    EXPECT_EQ(got.moe.router, want.moe.router) << c.json;
    EXPECT_EQ(got.moe.router_groups, want.moe.router_groups) << c.json;  // DeepSeek-V3: n_group 8
    EXPECT_EQ(got.moe.router_group_topk, want.moe.router_group_topk) << c.json;
    EXPECT_DOUBLE_EQ(moe_total_params(got), moe_total_params(want)) << c.json;
    EXPECT_DOUBLE_EQ(moe_active_params(got), moe_active_params(want)) << c.json;
    // The training sequence is not max_position_embeddings: it stays the base workload's, with a note.
    EXPECT_EQ(g.seq_len, 4096) << c.json;
    EXPECT_NE(joined(imp.notes).find("max_position_embeddings"), std::string::npos) << c.json;
  }
}

TEST(HfConfig, PublishedSizes) {  // the imported models' sizes as published (rounded as published)
  auto params = [](const char* json) {
    auto imp = driver::read_hf_config(source_path(std::string("tests/data/hf/") + json + ".json"));
    return moe_total_params(with_overrides("workloads/base-llm.yaml", imp.sets)) / 1e9;
  };
  EXPECT_NEAR(params("llama3-8b"), 8.03, 0.005);
  EXPECT_NEAR(params("mixtral-8x7b"), 46.7, 0.05);  // Mixtral of Experts, arXiv 2401.04088, Sec. 2
  EXPECT_NEAR(params("mistral-7b"), 7.24, 0.005);   // the mistralai/Mistral-7B-v0.1 model card
}

TEST(HfConfig, Gpt2StyleConfig) {
  auto imp = driver::parse_hf_config(R"({"model_type": "gpt2", "n_layer": 12, "n_embd": 768, "n_head": 12,
      "n_positions": 1024, "n_ctx": 1024, "vocab_size": 50257, "activation_function": "gelu_new",
      "layer_norm_epsilon": 1e-5, "resid_pdrop": 0.1, "attn_pdrop": 0.1, "embd_pdrop": 0.1})",
                                     "gpt2.json");
  for (const char* s : {"workload.model.layers=12", "workload.model.hidden=768", "workload.model.mlp=gelu",
                        "workload.model.norm=layernorm", "workload.model.position_embedding=learned",
                        "workload.model.tied_embeddings=true", "workload.model.linear_bias=true",
                        "workload.model.dropout=0.1"})
    EXPECT_TRUE(has_set(imp, s)) << s;
  EXPECT_TRUE(imp.warnings.empty()) << joined(imp.warnings);
}

TEST(HfConfig, WhatItCannotRepresentIsNamed) {
  // Mistral 7B v0.1's sliding window: every layer (tests/test_sliding_window.cpp has the patterns).
  auto mistral =
      driver::parse_hf_config(R"({"model_type": "mistral", "num_hidden_layers": 32, "hidden_size": 4096,
      "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000,
      "hidden_act": "silu", "rms_norm_eps": 1e-5, "sliding_window": 4096, "tie_word_embeddings": false,
      "some_new_field": 3})",
                              "mistral.json");
  std::string w = joined(mistral.warnings);
  EXPECT_TRUE(has_set(mistral, "workload.model.sliding_window=4096")) << joined(mistral.sets);
  EXPECT_NE(w.find("some_new_field"), std::string::npos) << w;  // unknown fields are listed, not dropped
  EXPECT_TRUE(has_set(mistral, "workload.model.mlp=swiglu"));
  const char* base = R"("num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4)";
  auto error = [&](const std::string& extra) {
    return error_of([&] { driver::parse_hf_config("{" + std::string(base) + extra + "}", "c.json"); });
  };
  EXPECT_NE(error(R"(, "mamba_d_state": 128)").find("field 'mamba_d_state': a hybrid Mamba"),
            std::string::npos);
  EXPECT_NE(error(R"(, "hybrid_override_pattern": "M-M*")").find("hybrid"), std::string::npos);
  EXPECT_NE(error(R"(, "mlp_only_layers": [0, 5])").find("mlp_only_layers"), std::string::npos);
  EXPECT_NE(error(R"(, "decoder_sparse_step": 2)").find("decoder_sparse_step"), std::string::npos);
  EXPECT_NE(error(R"(, "num_key_value_heads": "8")").find("c.json: field 'num_key_value_heads' is \"8\""),
            std::string::npos);
  EXPECT_NE(error(R"(, "hidden_act": "tanh")").find("hidden_act 'tanh'"), std::string::npos);
  EXPECT_NE(error(R"(, "num_local_experts": 8)").find("num_experts_per_tok"), std::string::npos);
  EXPECT_NE(error_of([] {
              driver::parse_hf_config("{\"hidden_size\": 64}", "c.json");
            }).find("needs num_hidden_layers"),
            std::string::npos);
  EXPECT_NE(error_of([] { driver::parse_hf_config("{not json", "c.json"); }).find("c.json: not a JSON file"),
            std::string::npos);
}

TEST(HfConfig, ImportedOverridesComeBeforeSetAndNeedAShapeWithoutWorkload) {
  std::string workload;
  std::vector<std::string> sets = {"workload.model.layers=2"};
  driver::JobSources src;
  src.hf_config = source_path("tests/data/hf/llama3-8b.json");
  auto lines = driver::import_job(src, "workloads/base-llm.yaml", workload, sets);
  EXPECT_EQ(workload, "workloads/base-llm.yaml");
  ASSERT_GE(sets.size(), 2u);
  EXPECT_EQ(sets.back(), "workload.model.layers=2");  // --set still wins: it applies last
  EXPECT_EQ(with_overrides("workloads/base-llm.yaml", sets).model.layers, 2);
  EXPECT_NE(joined(lines).find("note: no --workload"), std::string::npos);
  // A command line without the model's shape and no --workload: nothing to simulate.
  std::string none;
  std::vector<std::string> none_sets;
  driver::JobSources megatron;
  megatron.megatron_args = "--tensor-model-parallel-size 2";
  EXPECT_NE(error_of([&] {
              driver::import_job(megatron, "base.yaml", none, none_sets);
            }).find("nothing gave model.layers"),
            std::string::npos);
}

// --hf-config / --megatron-args fill a transformer_lm workload: with a workload of another kind the error
// names its kind and file, instead of an unknown model key of the first import.
TEST(HfConfig, NonTransformerWorkloadIsAClearError) {
  for (const char* file : {"workloads/ctr-sparse-ps.yaml", "workloads/gshard-moe.yaml"}) {
    std::string workload = source_path(file);
    std::vector<std::string> sets;
    driver::JobSources src;
    src.hf_config = source_path("tests/data/hf/llama3-8b.json");
    std::string e = error_of([&] { driver::import_job(src, "workloads/base-llm.yaml", workload, sets); });
    EXPECT_NE(e.find("--hf-config describes a transformer language model"), std::string::npos) << e;
    EXPECT_NE(e.find(file), std::string::npos) << e;  // file:line of its kind
    EXPECT_NE(e.find("kind"), std::string::npos) << e;
    driver::JobSources megatron;
    megatron.megatron_args = "--num-layers 4";
    e = error_of([&] { driver::import_job(megatron, "workloads/base-llm.yaml", workload, sets); });
    EXPECT_NE(e.find("--megatron-args describes"), std::string::npos) << e;
  }
  std::string llama = source_path("workloads/llama3-8b.yaml");  // a transformer_lm workload imports
  std::vector<std::string> sets;
  driver::JobSources src;
  src.hf_config = source_path("tests/data/hf/llama3-8b.json");
  EXPECT_NO_THROW(driver::import_job(src, "workloads/base-llm.yaml", llama, sets));
  EXPECT_FALSE(sets.empty());
}
