// Uneven pipeline split (parallel.embedding_in_pipeline_split / loss_in_pipeline_split, Megatron-Core's
// account_for_embedding/loss_in_pipeline_split): layers per chunk and stage against the closed form, the
// parameters each stage holds, the compute each stage runs, and clear errors for splits that cannot run.
#include <gtest/gtest.h>

#include <numeric>

#include "podsim/core/error.hpp"
#include "podsim/workload/transformer/megatron_builder.hpp"
#include "podsim/workload/transformer/memory_model.hpp"
#include "podsim/workload/transformer/pipeline_split.hpp"
#include "podsim/workload/transformer/transformer_loader.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::workload;

namespace {

WorkloadConfig split(int layers, int pp, int v, bool embedding, bool loss) {
  WorkloadConfig w;
  w.model.layers = layers;
  w.parallel.pp = pp;
  w.parallel.virtual_stages = v;
  w.parallel.embedding_in_pipeline_split = embedding;
  w.parallel.loss_in_pipeline_split = loss;
  return w;
}

// A small GPT on 8 H100s: tp 2, pp 4, dp 1, untied embeddings (each stage's parameters add up).
Overrides small(int layers, bool counted, Overrides extra = {}) {
  Overrides o = {{"model.layers", std::to_string(layers)},
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
                 {"parallel.embedding_in_pipeline_split", counted ? "true" : "false"},
                 {"parallel.loss_in_pipeline_split", counted ? "true" : "false"},
                 {"training.global_batch", "8"},
                 {"training.micro_batch", "1"},
                 {"training.precision", "bf16"}};
  o.insert(o.end(), extra.begin(), extra.end());
  return o;
}

topology::Topology h100() {
  return podsim::testing::preset("dgx-h100-superpod", {{"nodes", "1"}});
}

WorkloadConfig load(int layers, bool counted, Overrides extra = {}) {
  return load_workload(podsim::testing::source_path("workloads/gpt3-175b.yaml"),
                       small(layers, counted, extra), h100());
}

// Device time of the compute tasks on one stage's timeline.
double stage_compute(const StepPlan& plan, int stage) {
  double sum = 0;
  for (const auto& t : plan.graph.tasks)
    if (t.stage == stage && t.compute_category == plan::Category::compute) sum += t.compute_seconds;
  return sum;
}

}  // namespace

TEST(PipelineSplit, Llama405bSplitsIntoTwoLayerChunks) {
  // 126 layers + embedding + loss = 128 slots = pp 8 x vp 8 x 2 (NeMo's Llama 3.1 405B recipe).
  auto w = split(126, 8, 8, true, true);
  EXPECT_EQ(pipeline_slots(w), 128);
  EXPECT_TRUE(splits_evenly(w, 8));
  EXPECT_EQ(chunk_layers(w, 8, 0, 0), 1);
  EXPECT_EQ(chunk_layers(w, 8, 7, 7), 1);
  EXPECT_EQ(chunk_layers(w, 8, 0, 1), 2);
  EXPECT_EQ(chunk_layers(w, 8, 7, 0), 2);
  EXPECT_EQ(stage_layers(w, 0), 15);
  EXPECT_EQ(stage_layers(w, 3), 16);
  EXPECT_EQ(stage_layers(w, 7), 15);
  // Chunks in Megatron's interleaved order cover layers 0..125 without gap or overlap.
  long long next = 0;
  for (int c = 0; c < 8; ++c)
    for (int s = 0; s < 8; ++s) {
      EXPECT_EQ(chunk_first_layer(w, 8, s, c), next) << "stage " << s << " chunk " << c;
      next += chunk_layers(w, 8, s, c);
    }
  EXPECT_EQ(next, 126);
  int total = 0;
  for (int s = 0; s < 8; ++s) total += stage_layers(w, s);
  EXPECT_EQ(total, 126);
}

TEST(PipelineSplit, Llama405bAsMetaRanItHasOneSlotChunks) {
  // Llama 3 paper: 126 layers over pp 16, the first chunk of the first stage only the embedding, the last
  // chunk of the last stage only the output and loss: 128 one-slot chunks (vp 8).
  auto w = split(126, 16, 8, true, true);
  EXPECT_TRUE(splits_evenly(w, 8));
  EXPECT_EQ(chunk_layers(w, 8, 0, 0), 0);
  EXPECT_EQ(chunk_layers(w, 8, 15, 7), 0);
  EXPECT_EQ(chunk_layers(w, 8, 0, 1), 1);
  EXPECT_EQ(stage_layers(w, 0), 7);
  EXPECT_EQ(stage_layers(w, 8), 8);
  EXPECT_EQ(stage_layers(w, 15), 7);
  long long next = 0;
  for (int c = 0; c < 8; ++c)
    for (int s = 0; s < 16; ++s) {
      EXPECT_EQ(chunk_first_layer(w, 8, s, c), next) << "stage " << s << " chunk " << c;
      next += chunk_layers(w, 8, s, c);
    }
  EXPECT_EQ(next, 126);
}

TEST(PipelineSplit, AChunkOfTheEmbeddingAloneRuns) {
  // 6 layers + 2 slots over pp 4 x 2 chunks: the first chunk holds the embedding only, the last the loss.
  auto topo = h100();
  auto w = load(6, true, {{"parallel.schedule", "interleaved"}, {"parallel.virtual_stages", "2"}});
  EXPECT_EQ(chunk_layers(w, 2, 0, 0), 0);
  auto one_slot = build_megatron_step(topo, w, 1, 1);
  auto two_slot = build_megatron_step(topo, load(6, true), 1, 1);
  // The same layers per stage either way (stage 0: 1, stages 1-2: 2, stage 3: 1).
  for (int s = 0; s < 4; ++s) EXPECT_NEAR(stage_compute(one_slot, s), stage_compute(two_slot, s), 1e-6) << s;
}

TEST(PipelineSplit, WithoutFlagsTheSplitIsEven) {
  auto w = split(96, 8, 3, false, false);
  EXPECT_EQ(pipeline_slots(w), 96);
  for (int s = 0; s < 8; ++s) EXPECT_EQ(stage_layers(w, s), 12);
  EXPECT_EQ(chunk_layers(w, 3, 0, 0), 4);
  EXPECT_EQ(chunk_first_layer(w, 3, 2, 1), (1 * 8 + 2) * 4);
  EXPECT_FALSE(splits_evenly(split(126, 8, 8, false, false), 8));
  // Only the embedding counted: 127 slots do not split into 8.
  EXPECT_FALSE(splits_evenly(split(126, 8, 1, true, false), 1));
  EXPECT_TRUE(splits_evenly(split(127, 8, 1, true, false), 1));
}

TEST(PipelineSplit, StageParametersFollowTheLayers) {
  // 6 layers + 2 slots over pp 4: stages hold 1, 2, 2, 1 layers.
  auto w = load(6, true);
  double per_layer = layer_params(w.model) / w.parallel.tp;
  EXPECT_DOUBLE_EQ(stage_params(w, 1), 2 * per_layer);
  EXPECT_DOUBLE_EQ(stage_params(w, 2), 2 * per_layer);
  auto even = load(8, false);  // 2 layers per stage
  EXPECT_NEAR(stage_params(even, 0) - stage_params(w, 0), per_layer, 1e-6 * per_layer);
  EXPECT_NEAR(stage_params(even, 3) - stage_params(w, 3), per_layer, 1e-6 * per_layer);
  // Over all stages: the even split's parameters less its two extra layers.
  double sum = 0, even_sum = 0;
  for (int s = 0; s < 4; ++s) sum += stage_params(w, s), even_sum += stage_params(even, s);
  EXPECT_NEAR(sum, even_sum - 2 * per_layer, 1e-9 * even_sum);
}

TEST(PipelineSplit, StageComputeFollowsTheLayers) {
  auto topo = h100();
  auto uneven = build_megatron_step(topo, load(6, true), 1, 1);
  auto even = build_megatron_step(topo, load(8, false), 1, 1);
  // A middle stage holds two layers either way; the first holds one fewer than the even split's.
  EXPECT_NEAR(stage_compute(uneven, 1), stage_compute(even, 1), 1e-9);
  double layer = stage_compute(even, 1) / 2;
  EXPECT_NEAR(stage_compute(uneven, 0), stage_compute(even, 0) - layer, 1e-6 * layer);
  EXPECT_NEAR(stage_compute(uneven, 3), stage_compute(even, 3) - layer, 1e-6 * layer);
  // Memory: the first stage stores one layer's activations per microbatch in flight fewer.
  EXPECT_LT(uneven.memory[0].activations, even.memory[0].activations);
  EXPECT_LT(uneven.memory[0].weights, even.memory[0].weights);
}

TEST(PipelineSplit, ImpossibleSplitsAreInputErrors) {
  std::string e = podsim::testing::error_of([] { load(7, false); });
  EXPECT_NE(e.find("layers=7 is not divisible by pp*virtual_stages = 4*1"), std::string::npos) << e;
  EXPECT_NE(e.find("embedding_in_pipeline_split"), std::string::npos) << e;
  e = podsim::testing::error_of([] { load(7, true); });
  EXPECT_NE(e.find("9 layer slots"), std::string::npos) << e;
  EXPECT_NE(e.find("valid pp*virtual_stages: 1, 3, 9"), std::string::npos) << e;
  e = podsim::testing::error_of([] { load(6, true, {{"parallel.loss_in_pipeline_split", "maybe"}}); });
  EXPECT_NE(e.find("loss_in_pipeline_split"), std::string::npos) << e;
}
