// Dropout masks in the activation memory (model.dropout) and the embedding's share of a first stage's
// activations: closed forms for the bytes each removes or keeps.
#include <gtest/gtest.h>

#include "podsim/core/error.hpp"
#include "podsim/workload/transformer/memory_model.hpp"
#include "podsim/workload/transformer/transformer_loader.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::workload;

namespace {

Overrides small(Overrides extra = {}) {
  Overrides o = {{"model.layers", "8"},
                 {"model.hidden", "1024"},
                 {"model.heads", "16"},
                 {"model.ffn_hidden", "4096"},
                 {"model.seq_len", "2048"},
                 {"model.vocab", "51200"},
                 {"parallel.tp", "2"},
                 {"parallel.pp", "4"},
                 {"parallel.dp", "1"},
                 {"parallel.schedule", "interleaved"},
                 {"parallel.virtual_stages", "2"},
                 {"parallel.sequence_parallel", "true"},
                 {"training.global_batch", "8"},
                 {"training.micro_batch", "1"},
                 {"training.precision", "bf16"},
                 {"training.recompute", "none"},
                 {"training.attention", "flash"}};
  o.insert(o.end(), extra.begin(), extra.end());
  return o;
}

WorkloadConfig load(Overrides extra = {}) {
  auto topo = podsim::testing::preset("dgx-h100-superpod", {{"nodes", "1"}});
  return load_workload(podsim::testing::source_path("workloads/gpt3-175b.yaml"), small(extra), topo);
}

}  // namespace

TEST(MemoryMasks, NoDropoutKeepsNoMasks) {
  auto with = load(), without = load({{"model.dropout", "0"}});
  double sbh = 2048.0 * 1024;  // micro-batch 1
  // Two masks a layer (after attention and after the MLP), one byte an element, split over tp by
  // sequence parallelism.
  EXPECT_NEAR(
      layer_activation_bytes(with, 1, Recompute::none) - layer_activation_bytes(without, 1, Recompute::none),
      2 * sbh / 2, 1e-6 * sbh);
}

TEST(MemoryMasks, EmbeddingMaskOnlyForTheFirstChunksMicrobatches) {
  auto w = load();
  // 8 microbatches: the first stage's 1F1B-interleaved passes in flight can exceed them, the embedding's
  // cannot.
  EXPECT_DOUBLE_EQ(embedding_in_flight(w, 1, 11), 8);
  EXPECT_DOUBLE_EQ(embedding_in_flight(w, 1, 5), 5);
  EXPECT_DOUBLE_EQ(embedding_in_flight(w, 2, 11), 4);
  auto profile = podsim::testing::preset("dgx-h100-superpod", {{"nodes", "1"}}).device_profile;
  auto masks = stage_memory(w, 1, 2, {11, 9, 7, 5}, profile);
  auto none = stage_memory(load({{"model.dropout", "0"}}), 1, 2, {11, 9, 7, 5}, profile);
  double sbh = 2048.0 * 1024, per_layer = 2 * sbh / 2;
  // Stage 0: 11 passes x 1 layer of layer masks, + 8 microbatches x the embedding mask (s/tp x h).
  EXPECT_NEAR(masks[0].activations - none[0].activations, 11 * per_layer + 8 * sbh / 2, 1e-6 * sbh);
  EXPECT_NEAR(masks[1].activations - none[1].activations, 9 * per_layer, 1e-6 * sbh);
}

TEST(MemoryMasks, DropoutOutOfRangeIsAnInputError) {
  std::string e = podsim::testing::error_of([] { load({{"model.dropout", "1.5"}}); });
  EXPECT_NE(e.find("dropout"), std::string::npos) << e;
}
