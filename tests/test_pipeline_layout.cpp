// Explicit pipeline layouts (parallel.pipeline_layout, Megatron-Core's pipeline_model_parallel_layout):
// layers per chunk of NVIDIA's DeepSeek-V3 layouts against their closed forms, the stages' parameters and
// compute following them, the layout picked by pp x virtual_stages, and clear errors for bad strings.
#include <gtest/gtest.h>

#include "podsim/core/error.hpp"
#include "podsim/workload/transformer/megatron_builder.hpp"
#include "podsim/workload/transformer/memory_model.hpp"
#include "podsim/workload/transformer/pipeline_layout.hpp"
#include "podsim/workload/transformer/pipeline_split.hpp"
#include "podsim/workload/transformer/transformer_loader.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::workload;

namespace {

ConfigNode holder() {
  static ConfigNode node = ConfigNode::load_string("pipeline_layout: x\n", "layout.yaml");
  return node;
}

std::vector<int> parse(const std::string& text, int layers, int mtp = 0) {
  ModelConfig m;
  m.layers = layers;
  m.mtp_layers = mtp;
  return parse_pipeline_layout(text, m, holder(), "pipeline_layout").layers;
}

std::string parse_error(const std::string& text, int layers, int mtp = 0) {
  return podsim::testing::error_of([&] { parse(text, layers, mtp); });
}

// A small GPT on 8 H100s (tp 2, pp 4, dp 1) with 10 layers, which no even split into 4 stages holds.
Overrides small(const std::string& layout, Overrides extra = {}) {
  Overrides o = {{"model.layers", "10"},
                 {"model.hidden", "1024"},
                 {"model.heads", "16"},
                 {"model.ffn_hidden", "4096"},
                 {"model.seq_len", "2048"},
                 {"model.vocab", "51200"},
                 {"model.tied_embeddings", "false"},
                 {"parallel.tp", "2"},
                 {"parallel.pp", "4"},
                 {"parallel.dp", "1"},
                 {"parallel.schedule", "1f1b"},
                 {"parallel.virtual_stages", "1"},
                 {"parallel.pipeline_layout", layout},
                 {"training.global_batch", "8"},
                 {"training.micro_batch", "1"},
                 {"training.precision", "bf16"}};
  o.insert(o.end(), extra.begin(), extra.end());
  return o;
}

WorkloadConfig load(const std::string& layout, Overrides extra = {}) {
  return load_workload(podsim::testing::source_path("workloads/gpt3-175b.yaml"), small(layout, extra),
                       podsim::testing::preset("dgx-h100-superpod", {{"nodes", "1"}}));
}

double stage_compute(const StepPlan& plan, int stage) {
  double sum = 0;
  for (const auto& t : plan.graph.tasks)
    if (t.stage == stage && t.compute_category == plan::Category::compute) sum += t.compute_seconds;
  return sum;
}

}  // namespace

TEST(PipelineLayout, DeepSeekV3LayoutsExpandToTheirClosedForms) {
  // B200 pp 16 / pp 8 x vp 2: E + 4 layers, 14 chunks of 4, then 1 layer + MTP + loss (4 + 56 + 1 = 61).
  std::vector<int> b200 = parse("Et*4|(t*4|)*14tmL", 61, 1);
  ASSERT_EQ(b200.size(), 16u);
  for (size_t i = 0; i < 15; ++i) EXPECT_EQ(b200[i], 4) << i;
  EXPECT_EQ(b200[15], 1);
  // H100 pp 8 x vp 4: E + 1 layer, 30 chunks of 2, a last chunk with only MTP and loss (1 + 60 + 0).
  std::vector<int> h100 = parse("Et|(tt|)*30mL", 61, 1);
  ASSERT_EQ(h100.size(), 32u);
  EXPECT_EQ(h100.front(), 1);
  for (size_t i = 1; i < 31; ++i) EXPECT_EQ(h100[i], 2) << i;
  EXPECT_EQ(h100.back(), 0);
  // Cosmetic commas are dropped, as Megatron does.
  EXPECT_EQ(parse("Et*4,|(t*4|)*14,tmL", 61, 1), b200);
  // Megatron's docstring example "Ettt|(tt|)*29,m|L" puts the MTP module in a chunk of its own
  // (mtp_standalone), which podsim does not model: refused, not mis-costed.
  EXPECT_NE(parse_error("Ettt|(tt|)*29,m|L", 61, 1).find("mtp_standalone"), std::string::npos);
}

TEST(PipelineLayout, ChunksFollowTheLayoutInMegatronOrder) {
  auto w = load("Et*4|t*2|t*3|tL", {{"parallel.schedule", "1f1b"}});
  EXPECT_TRUE(splits_evenly(w, 1));
  EXPECT_FALSE(splits_evenly(w, 2));
  EXPECT_EQ(stage_layers(w, 0), 4);
  EXPECT_EQ(stage_layers(w, 1), 2);
  EXPECT_EQ(stage_layers(w, 2), 3);
  EXPECT_EQ(stage_layers(w, 3), 1);
  EXPECT_EQ(chunk_first_layer(w, 1, 2, 0), 6);
  // Interleaved, pp 4 x vp 2: entry c * pp + s is chunk c of stage s.
  auto v = load("Et|t|t|t|tt|tt|t|tL", {{"parallel.schedule", "interleaved"},
                                        {"parallel.virtual_stages", "2"},
                                        {"training.global_batch", "8"}});
  EXPECT_EQ(chunk_layers(v, 2, 0, 1), 2);  // entry 4
  EXPECT_EQ(chunk_layers(v, 2, 3, 1), 1);  // entry 7
  EXPECT_EQ(chunk_first_layer(v, 2, 1, 1), 6);
  EXPECT_EQ(stage_layers(v, 0), 3);
  EXPECT_EQ(stage_layers(v, 2), 2);
  long long next = 0;
  for (int c = 0; c < 2; ++c)
    for (int s = 0; s < 4; ++s) {
      EXPECT_EQ(chunk_first_layer(v, 2, s, c), next);
      next += chunk_layers(v, 2, s, c);
    }
  EXPECT_EQ(next, 10);
}

TEST(PipelineLayout, StagesCostWhatTheyHold) {
  auto w = load("Et*4|t*2|t*3|tL");
  double per_layer = layer_params(w.model) / w.parallel.tp;
  EXPECT_NEAR(stage_params(w, 1), 2 * per_layer, 1e-9 * per_layer);
  EXPECT_NEAR(stage_params(w, 2), 3 * per_layer, 1e-9 * per_layer);
  auto plan = build_megatron_step(podsim::testing::preset("dgx-h100-superpod", {{"nodes", "1"}}), w, 1, 1);
  double layer = stage_compute(plan, 1) / 2;
  EXPECT_NEAR(stage_compute(plan, 2), 3 * layer, 1e-6 * layer);
  EXPECT_GT(plan.memory[2].weights, plan.memory[1].weights);
}

TEST(PipelineLayout, TheLayoutWithPpTimesVirtualStagesChunksApplies) {
  std::string both = "[\"Et*4|t*2|t*3|tL\", \"Et|t|t|t|tt|tt|t|tL\"]";
  Overrides inter = {{"parallel.schedule", "interleaved"}, {"parallel.virtual_stages", "2"}};
  EXPECT_EQ(stage_layers(load(both), 0), 4);
  EXPECT_EQ(stage_layers(load(both, inter), 0), 3);
  // pp 1: one chunk holds every layer, whatever the layouts' chunk counts (they are still checked).
  WorkloadConfig one = load(both, {{"parallel.pp", "1"}});
  EXPECT_FALSE(has_layout(one.parallel));  // kept for podsim plan's pp search, placed by none
  EXPECT_EQ(stage_layers(one, 0), 10);
  EXPECT_TRUE(splits_evenly(one, 1));
  EXPECT_NE(podsim::testing::error_of([] {
              load("Et*4|t*2|t*3|L", {{"parallel.pp", "1"}});
            }).find("model.layers"),
            std::string::npos);
  // auto: ambiguous with both (4 and 8 chunks fit pp 4), resolved with one.
  Overrides automatic = {{"parallel.schedule", "interleaved"}, {"parallel.virtual_stages", "auto"}};
  EXPECT_EQ(load("[\"Et|t|t|t|tt|tt|t|tL\"]", automatic).parallel.virtual_stages, 2);
  std::string e = podsim::testing::error_of([&] { load(both, automatic); });
  EXPECT_NE(e.find("set virtual_stages to choose"), std::string::npos) << e;
  e = podsim::testing::error_of([&] { load("Et*4|t*2|t*3|tL", inter); });
  EXPECT_NE(e.find("no layout has pp*virtual_stages = 4*2 = 8 model chunks (the layouts have 4)"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("parallel.pipeline_layout"), std::string::npos) << e;
  e = podsim::testing::error_of([] {
    load("Et*4|t*2|t*3|tL", {{"parallel.loss_in_pipeline_split", "true"}});
  });
  EXPECT_NE(e.find("already places the embedding (E) and the loss (L)"), std::string::npos) << e;
  e = podsim::testing::error_of([] { load("[\"Et*4|t*2|t*3|tL\", \"Et*3|t*3|t*3|tL\"]"); });
  EXPECT_NE(e.find("two layouts have 4 chunks"), std::string::npos) << e;
  EXPECT_NE(e.find("pipeline_layout[1]"), std::string::npos) << e;
}

TEST(PipelineLayout, BadStringsNameWhatIsValid) {
  auto has = [](const std::string& e, const std::string& what) {
    return e.find(what) != std::string::npos && e.find("layout.yaml") != std::string::npos &&
           e.find("E (embedding), t (transformer layer)") != std::string::npos;
  };
  EXPECT_TRUE(has(parse_error("Etx|tL", 2), "'x' at position 3 is not a layer symbol"))
      << parse_error("Etx|tL", 2);
  EXPECT_TRUE(has(parse_error("E(tt|L", 2), "'(' at position 2 is never closed"));
  EXPECT_TRUE(has(parse_error("Et)|tL", 2), "')' at position 3 closes no '('"));
  EXPECT_TRUE(has(parse_error("E((t|)*2)*2L", 4), "is nested"));
  EXPECT_TRUE(has(parse_error("E(t|)L", 1), "needs a repeat count: (...)*n"));
  EXPECT_TRUE(has(parse_error("Et*|tL", 2), "'*' at position 3 needs a repeat count"));
  EXPECT_TRUE(has(parse_error("Et*0|tL", 1), "must be at least 1"));
  EXPECT_NE(parse_error("E*2t|tL", 2).find("exactly one E"), std::string::npos);
  EXPECT_TRUE(has(parse_error("*3tL", 3), "repeats nothing"));
  EXPECT_TRUE(has(parse_error("Et*99999999L", 1), "more than"));
  // Well formed, but not this model.
  EXPECT_NE(parse_error("Et|tL", 3).find("places 2 transformer layers (t); model.layers is 3"),
            std::string::npos);
  EXPECT_NE(parse_error("tE|tL", 2).find("exactly one E (the embedding), as its first symbol"),
            std::string::npos);
  EXPECT_NE(parse_error("Et|Lt", 2).find("exactly one L (the loss), as its last symbol"), std::string::npos);
  EXPECT_NE(parse_error("Et|tmL", 2).find("model.mtp_layers is 0"), std::string::npos);
  EXPECT_NE(parse_error("Etm|tL", 2, 1).find("every m must be in the last chunk"), std::string::npos);
  EXPECT_NE(parse_error("Et|mtL", 2, 1).find("after its transformer layers"), std::string::npos);
  // A number is not a layout; an empty list is refused.
  std::string e = podsim::testing::error_of([] { load("42"); });
  EXPECT_NE(e.find("pipeline_layout"), std::string::npos) << e;
  e = podsim::testing::error_of([] { load("[]"); });
  EXPECT_NE(e.find("an empty list"), std::string::npos) << e;
}

// The presets NVIDIA's rows run: DeepSeek-V3 at each chunk count of its layouts, Qwen3-235B-A22B with the
// embedding and loss counted (94 + 2 = 96 slots = pp 8 x vp 4 x 3).
TEST(PipelineLayout, MoePresetsSplitTheirLayers) {
  auto root = ConfigNode::load_file(podsim::testing::source_path("workloads/deepseek-v3.yaml"));
  WorkloadConfig v3 = read_transformer_workload(root, 1024, 8);
  ASSERT_EQ(v3.parallel.pipeline_layouts.size(), 4u);
  int total = 0;
  for (int s = 0; s < 8; ++s) total += stage_layers(v3, s);
  EXPECT_EQ(total, 61);
  EXPECT_EQ(chunk_layers(v3, 4, 7, 3), 0);  // the MTP + loss chunk
  EXPECT_EQ(stage_layers(v3, 0), 7);        // 1 + 2 + 2 + 2
  auto q = ConfigNode::load_file(podsim::testing::source_path("workloads/qwen3-235b-a22b.yaml"));
  WorkloadConfig qwen = read_transformer_workload(q, 256, 8);
  EXPECT_EQ(stage_layers(qwen, 0), 11);
  EXPECT_EQ(stage_layers(qwen, 3), 12);
  EXPECT_EQ(stage_layers(qwen, 7), 11);
}
