// Sliding-window attention (model.sliding_window, model.full_attention_every): which layers use the window
// (Megatron-Core's window_attn_skip_freq), the FLOPs a windowed layer counts (Megatron-Bridge's effective
// window context), the blocks its fused kernel computes, what the step saves, the plan's bound below the
// step, the importers (HF config.json, Megatron-LM arguments) and the input errors.
#include <gtest/gtest.h>

#include "podsim/calibration/compute_model.hpp"
#include "podsim/core/config_node.hpp"
#include "podsim/driver/hf_config.hpp"
#include "podsim/driver/megatron_args.hpp"
#include "podsim/driver/plan.hpp"
#include "podsim/driver/simulation.hpp"
#include "podsim/workload/transformer/transformer_loader.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"
#include "podsim/workload/workload_model.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::workload;
using podsim::testing::error_of;
using podsim::testing::preset;
using podsim::testing::source_path;

namespace {

const std::string kGptOss = source_path("workloads/gpt-oss-120b.yaml");

ModelConfig windowed_model(long long window, int every) {
  ModelConfig m;
  m.layers = 36;
  m.hidden = 2880;
  m.heads = 64;
  m.kv_heads = 8;
  m.head_dim = 64;
  m.ffn_hidden = 2880;
  m.seq_len = 4096;
  m.vocab = 201088;
  m.sliding_window = window;
  m.full_attention_every = every;
  return m;
}

bool has_set(const driver::JobImport& imp, const std::string& set) {
  return std::find(imp.sets.begin(), imp.sets.end(), set) != imp.sets.end();
}

report::RunResult run(const topology::Topology& topo, const Overrides& sets) {
  return driver::simulate(topo, *load_workload_model(kGptOss, sets, topo));
}

}  // namespace

// GPT-OSS alternates (HF layer_types: sliding, full, ...): Megatron-Core's window_attn_skip_freq 2 keeps
// the layers numbered 2, 4, ... (1-based) at full attention.
TEST(SlidingWindow, WhichLayersUseTheWindow) {
  auto oss = windowed_model(128, 2);
  EXPECT_TRUE(windowed_layer(oss, 0));
  EXPECT_FALSE(windowed_layer(oss, 1));
  EXPECT_EQ(windowed_layers_in(oss, 0, 36), 18);
  EXPECT_EQ(windowed_layers_in(oss, 0, 9), 5);  // layers 1..9: full 2, 4, 6, 8
  EXPECT_EQ(windowed_layers_in(oss, 9, 9), 4);  // layers 10..18: full 10, 12, 14, 16, 18
  long long sum = 0;
  for (long long i = 0; i < 36; ++i) sum += windowed_layer(oss, i);
  EXPECT_EQ(sum, 18);
  auto gemma3 = windowed_model(1024, 6);  // five local layers to one global
  EXPECT_EQ(windowed_layers_in(gemma3, 0, 36), 30);
  EXPECT_EQ(windowed_layers_in(windowed_model(4096 / 2, 0), 0, 36), 36);  // Mistral: every layer
  EXPECT_EQ(windowed_layers_in(windowed_model(4096, 0), 0, 36), 0);       // as long as the sequence: full
  EXPECT_EQ(windowed_layers_in(windowed_model(0, 0), 0, 36), 0);
  EXPECT_EQ(full_attention_every_of({true, false, true, false}), 2);
  EXPECT_EQ(full_attention_every_of({true, true, true}), 0);
  EXPECT_EQ(full_attention_every_of({true, true, false, true, true, false}), 3);
  EXPECT_EQ(full_attention_every_of({false, true, true, false}), std::nullopt);
}

// Causal model FLOPs: a windowed layer's attention counts s * (W - W (W - 1) / 2s) pairs (Megatron-Bridge
// flop_utils' effective window context) where a full one counts s^2 / 2; the full (SC21) count, what
// unfused kernels compute whatever the mask, keeps s^2.
TEST(SlidingWindow, ModelFlopsCountTheWindowsPairs) {
  auto oss = windowed_model(128, 2), full = windowed_model(0, 0);
  double s = 4096, w = 128, a = 64, d = 64, batch = 3;
  double window_pairs = s * (w - w * (w - 1) / (2 * s)), full_pairs = s * s / 2;
  double expected = 3 * 18 * batch * 4 * a * d * (window_pairs - full_pairs);
  EXPECT_NEAR(model_flops_causal(oss, batch) - model_flops_causal(full, batch), expected,
              1e-9 * std::abs(expected));
  EXPECT_DOUBLE_EQ(model_flops(oss, batch), model_flops(full, batch));
  // Flash executes the window's pairs (2.5x in the backward); selective recomputation redoes them.
  double flash_full = hardware_flops(full, batch, Recompute::selective, Attention::flash);
  double flash_window = hardware_flops(oss, batch, Recompute::selective, Attention::flash);
  EXPECT_NEAR(flash_full - flash_window, -(3.5 + 1) / 3 * expected, 1e-9 * std::abs(expected));
  EXPECT_DOUBLE_EQ(hardware_flops(oss, batch, Recompute::none, Attention::unfused),
                   hardware_flops(full, batch, Recompute::none, Attention::unfused));
}

// The fused kernel computes the band of 128 x 128 blocks: per query block the diagonal one and the
// ceil((W - 1) / 128) before it, fewer at the start.
TEST(SlidingWindow, FusedKernelComputesTheBand) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "1"}});
  calibration::ComputeModel cm(topo.device_profile, calibration::DeviceRates{
                                                        .peak_flops = 989e12,
                                                        .hbm_bandwidth = 3.35e12,
                                                        .sm_count = 132,
                                                    });
  calibration::AttentionShape a{.batch_heads = 64, .q_len = 4096, .kv_len = 4096, .head_dim = 64};
  auto full = cm.fused_attention_forward(a);
  a.window = 128;
  auto band = cm.fused_attention_forward(a);
  double n = 32, per_block = 4 * 64 * 128.0 * 128 * 64;
  EXPECT_NEAR(full.flops, per_block * n * (n + 1) / 2, 1e-6 * full.flops);
  EXPECT_NEAR(band.flops, per_block * (n + (n - 1)), 1e-6 * band.flops);  // 1 + 2 x 31 blocks
  EXPECT_LT(band.seconds, full.seconds / 4);
  // Slower per FLOP: each thread block walks two blocks (its fixed cost weighs more).
  EXPECT_LT(band.flops / band.seconds, full.flops / full.seconds);
  a.window = 1024;
  double back = 8;  // ceil(1023 / 128)
  double blocks = n + back * (back + 1) / 2 + (n - 1 - back) * back;
  EXPECT_NEAR(cm.fused_attention_forward(a).flops, per_block * blocks, 1e-6 * per_block * blocks);
  a.window = 4096;  // the whole sequence: the causal triangle
  EXPECT_NEAR(
      cm.fused_attention_backward(a).flops,
      cm.fused_attention_backward({.batch_heads = 64, .q_len = 4096, .kv_len = 4096, .head_dim = 64}).flops,
      1);
}

// GPT-OSS 120B on two DGX H100: the windowed layers make the step shorter than full attention everywhere,
// by their attention kernels only; the trace lists the windowed kernels; with unfused attention, which
// computes every score, nothing changes; the summary says which layers use it.
TEST(SlidingWindow, TheStepSavesTheWindowedLayersAttention) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "2"}});
  Overrides layout = {{"parallel.pp", "2"},
                      {"parallel.dp", "8"},
                      {"parallel.ep", "8"},
                      {"training.global_batch", "32"},
                      {"model.layers", "12"}};
  auto windowed = run(topo, layout);
  auto full_sets = layout;
  full_sets.push_back({"model.sliding_window", "0"});
  full_sets.push_back({"model.full_attention_every", "0"});
  auto full = run(topo, full_sets);
  ASSERT_EQ(windowed.status, "ok") << windowed.status_detail;
  ASSERT_EQ(full.status, "ok") << full.status_detail;
  EXPECT_LT(windowed.step_time(), full.step_time());
  EXPECT_NE(windowed.plan.description.find("128-token sliding window in 6 of 12 layers"), std::string::npos)
      << windowed.plan.description;
  double window_fwd = 0, full_fwd = 0;
  for (const auto& k : windowed.plan.kernels) {
    if (k.name == "sliding-window flash attention forward") window_fwd = k.seconds;
    if (k.name == "flash attention forward" && k.group == "MoE layer forward") full_fwd = k.seconds;
  }
  ASSERT_GT(window_fwd, 0);
  EXPECT_LT(window_fwd, full_fwd / 2);
  // What a step saves is at most the windowed layers' full attention (6 of 12 layers, 2 stages).
  EXPECT_LT(full.step_time() - windowed.step_time(),
            6.0 / 2 * 16 * 2 * (full_fwd * 3.6));  // 16 microbatches, forward + backward (~2.6x)
  auto unfused_sets = layout;
  unfused_sets.push_back({"training.attention", "unfused"});
  unfused_sets.push_back({"training.recompute", "full"});
  auto unfused_full_sets = unfused_sets;
  unfused_full_sets.push_back({"model.sliding_window", "0"});
  unfused_full_sets.push_back({"model.full_attention_every", "0"});
  auto u1 = run(topo, unfused_sets), u2 = run(topo, unfused_full_sets);
  ASSERT_EQ(u1.status, "ok") << u1.status_detail;
  EXPECT_DOUBLE_EQ(u1.step_time(), u2.step_time());
}

// The plan's lower bound counts the saving: it stays below every simulated step of a windowed model.
TEST(SlidingWindow, PlanBoundStaysBelowTheStep) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "1"}});
  const std::string llama = source_path("workloads/llama3-8b.yaml");
  ConfigNode root = ConfigNode::load_file(llama);
  for (const auto& [k, v] : Overrides{{"model.sliding_window", "512"},
                                      {"model.full_attention_every", "4"},
                                      {"model.layers", "8"},
                                      {"parallel.pp", "[1, 2]"},
                                      {"parallel.tp", "[1, 2]"},
                                      {"parallel.dp", "auto"},
                                      {"parallel.zero", "1"},
                                      {"training.micro_batch", "[1, 2]"},
                                      {"training.global_batch", "16"}})
    root.apply_override(k, v, "test");
  auto s = driver::read_space(root, llama, topo, false, {});
  driver::PlanOptions all{.top = 1, .jobs = 2, .exhaustive = true, .progress = {}};
  auto r = driver::run_plan(topo, s, all);
  int simulated = 0;
  for (const auto& row : r.rows) {
    if (!row.sim().ok()) continue;
    ++simulated;
    EXPECT_LE(row.estimate.lower_bound, row.sim().step_time) << driver::candidate_label(s, row.values);
  }
  EXPECT_GT(simulated, 2);
}

TEST(SlidingWindow, ImportersReadThePattern) {
  const char* base = R"("num_hidden_layers": 6, "hidden_size": 64, "num_attention_heads": 4,
      "intermediate_size": 128, "vocab_size": 1000, "hidden_act": "silu", "rms_norm_eps": 1e-5)";
  auto hf = [&](const std::string& model_type, const std::string& extra) {
    return driver::parse_hf_config("{\"model_type\": \"" + model_type + "\", " + base + extra + "}",
                                   "c.json");
  };
  auto oss = hf("gpt_oss", R"(, "sliding_window": 128, "layer_types": ["sliding_attention", "full_attention",
      "sliding_attention", "full_attention", "sliding_attention", "full_attention"])");
  EXPECT_TRUE(has_set(oss, "workload.model.sliding_window=128"));
  EXPECT_TRUE(has_set(oss, "workload.model.full_attention_every=2"));
  auto gemma3 = hf("gemma3_text", R"(, "sliding_window": 1024, "sliding_window_pattern": 3)");
  EXPECT_TRUE(has_set(gemma3, "workload.model.full_attention_every=3"));
  auto gemma2 = hf("gemma2", R"(, "sliding_window": 4096)");
  EXPECT_TRUE(has_set(gemma2, "workload.model.full_attention_every=2"));
  auto mistral = hf("mistral", R"(, "sliding_window": 4096)");
  EXPECT_TRUE(has_set(mistral, "workload.model.sliding_window=4096"));
  for (const auto& s : mistral.sets) EXPECT_EQ(s.find("full_attention_every"), std::string::npos) << s;
  auto qwen = hf("qwen2", R"(, "sliding_window": 4096, "use_sliding_window": false)");
  for (const auto& s : qwen.sets) EXPECT_EQ(s.find("sliding_window"), std::string::npos) << s;
  auto ragged = hf("gpt_oss", R"(, "sliding_window": 128, "layer_types": ["full_attention",
      "sliding_attention", "sliding_attention", "sliding_attention", "full_attention", "full_attention"])");
  std::string warned;
  for (const auto& w : ragged.warnings) warned += w + "\n";
  EXPECT_NE(warned.find("no fixed period"), std::string::npos) << warned;
  auto mg = driver::read_megatron_args("--num-layers 12 --window-size 127,0 --window-attn-skip-freq 2");
  EXPECT_TRUE(has_set(mg, "workload.model.sliding_window=128"));
  EXPECT_TRUE(has_set(mg, "workload.model.full_attention_every=2"));
  auto listed = driver::read_megatron_args("--window-size (4095,0) --window-attn-skip-freq [1,1,1,0]*3");
  EXPECT_TRUE(has_set(listed, "workload.model.sliding_window=4096"));
  EXPECT_TRUE(has_set(listed, "workload.model.full_attention_every=4"));
  std::string e = error_of([] { driver::read_megatron_args("--window-size 128"); });
  EXPECT_NE(e.find("--window-size '128'"), std::string::npos) << e;
}

TEST(SlidingWindow, BadInputIsAClearError) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "2"}});
  auto refusal = [&](const Overrides& sets) {
    return error_of([&] { load_workload_model(kGptOss, sets, topo); });
  };
  std::string e = refusal({{"model.sliding_window", "0"}});  // full_attention_every 2 stays
  EXPECT_NE(e.find("model.full_attention_every"), std::string::npos) << e;
  EXPECT_NE(e.find("needs model.sliding_window"), std::string::npos) << e;
  e = refusal(
      {{"parallel.cp", "2"}, {"parallel.pp", "1"}, {"parallel.dp", "8"}, {"training.global_batch", "32"}});
  EXPECT_NE(e.find("cp_algorithm"), std::string::npos) << e;
  EXPECT_NE(e.find("all_gather"), std::string::npos) << e;
  // Every layer full (full_attention_every 1): nothing windowed, so the ring runs, as the plan's check says.
  EXPECT_NO_THROW(load_workload_model(kGptOss,
                                      {{"parallel.cp", "2"},
                                       {"parallel.pp", "1"},
                                       {"parallel.dp", "8"},
                                       {"training.global_batch", "32"},
                                       {"model.full_attention_every", "1"}},
                                      topo));
  e = refusal({{"model.sliding_window", "-1"}});
  EXPECT_NE(e.find("model.sliding_window"), std::string::npos) << e;
  e = error_of([&] {
    load_workload_model(source_path("workloads/deepseek-v3.yaml"), {{"model.sliding_window", "128"}}, topo);
  });
  EXPECT_NE(e.find("mla"), std::string::npos) << e;
}
