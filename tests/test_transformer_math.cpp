// FLOP and parameter counts against Megatron-LM SC21.
#include <gtest/gtest.h>

#include "podsim/core/csv_table.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::workload;

namespace {

ModelConfig gpt(long long layers, long long hidden, long long heads) {
  ModelConfig m;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.ffn_hidden = 4 * hidden;
  m.seq_len = 2048;
  m.vocab = 51200;
  return m;
}

}  // namespace

TEST(TransformerMath, HardwareFlopsWithFullRecomputeIsEquation3) {
  auto m = gpt(96, 12288, 96);
  double B = 1536, s = 2048, l = 96, h = 12288, V = 51200;
  double eq3 = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
  EXPECT_NEAR(megatron_eq3_flops(m, B) / eq3, 1.0, 1e-12);
  EXPECT_NEAR(hardware_flops(m, B, Recompute::full) / eq3, 1.0, 1e-12);
  // Without recomputation: three forward passes' worth (72 instead of 96 per layer).
  double model = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  EXPECT_NEAR(model_flops(m, B) / model, 1.0, 1e-12);
  EXPECT_LT(hardware_flops(m, B, Recompute::selective), hardware_flops(m, B, Recompute::full));
}

TEST(TransformerMath, ParameterCountsMatchTable1) {
  // The SC21 paper counts P = 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h)); podsim's count is that exactly.
  // The table rounds its first rows up (1.65B is printed as 1.7B), hence the 3% tolerance there.
  auto table = read_csv(podsim::testing::source_path("validation/megatron-sc21-table1.csv"));
  for (size_t i = 0; i < table.rows.size(); ++i) {
    double l = table.number(i, "layers"), h = table.number(i, "hidden_size"), V = 51200, s = 2048;
    auto m = gpt(static_cast<long long>(l), static_cast<long long>(h),
                 static_cast<long long>(table.number(i, "attention_heads")));
    double paper = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
    EXPECT_NEAR(total_params(m) / paper, 1.0, 1e-3) << "row " << i;
    EXPECT_NEAR(total_params(m) / (table.number(i, "params_billion") * 1e9), 1.0, 0.03) << "row " << i;
  }
}

TEST(TransformerMath, Gpt3Has175BillionParameters) {
  EXPECT_NEAR(total_params(gpt(96, 12288, 96)) / 1e9, 175.0, 0.6);
}
