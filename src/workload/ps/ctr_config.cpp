#include "podsim/workload/ps/ctr_config.hpp"

#include <fmt/format.h>

#include <cmath>

#include "podsim/core/config_choice.hpp"
#include "podsim/core/config_node.hpp"
#include "podsim/workload/bounded_reads.hpp"

namespace podsim::workload {
namespace {

constexpr long long kMaxDimension = 1 << 16, kMaxSlots = 1 << 16, kMaxWidth = 1 << 20;
constexpr long long kMaxBatch = 1 << 24, kMaxMinibatches = 1 << 20, kMaxMlpInput = 1 << 24;

}  // namespace

std::vector<int> CtrModel::mlp_widths() const {
  std::vector<int> widths{mlp_input()};
  widths.insert(widths.end(), mlp_hidden.begin(), mlp_hidden.end());
  widths.push_back(1);
  return widths;
}

double CtrModel::dense_params() const {
  auto w = mlp_widths();
  double params = 0;
  for (size_t i = 0; i + 1 < w.size(); ++i) params += static_cast<double>(w[i]) * w[i + 1] + w[i + 1];
  return params;
}

CtrWorkload read_ctr_workload(const ConfigNode& root, const std::string& file) {
  CtrWorkload w;
  w.file = file;
  w.name = read_document_name(root);

  ConfigNode model = root.child("model");
  ConfigNode emb = model.child("embedding");
  EmbeddingTable& t = w.model.embedding;
  t.features = emb.positive("features");
  if (t.features != std::floor(t.features) || t.features > 1e15)
    emb.fail("features", fmt::format("expected a whole number of rows from 1 to 1e15, got {}", t.features));
  // Ranges keep the int sizes below (MLP input = slots x dimension) and their products from overflowing;
  // production CTR tables use 8-256 weights a row and tens to hundreds of slots.
  t.dimension = int_in(emb, "dimension", 1, kMaxDimension);
  t.bytes_per_value = emb.positive_or("bytes_per_value", 4);
  t.optimizer_bytes_per_value = emb.non_negative_or("optimizer_bytes_per_value", 4);
  t.key_bytes = emb.non_negative_or("key_bytes", 8);
  emb.reject_unknown_keys();
  w.model.slots = int_in(model, "slots", 1, kMaxSlots);
  if (static_cast<long long>(w.model.slots) * t.dimension > kMaxMlpInput)
    model.fail("slots", fmt::format("the MLP input is slots x embedding.dimension = {} x {} wide; at most {} "
                                    "is supported",
                                    w.model.slots, t.dimension, kMaxMlpInput));
  w.model.nonzeros_per_example = model.positive("nonzeros_per_example");
  if (w.model.nonzeros_per_example < w.model.slots)
    model.fail(
        "nonzeros_per_example",
        fmt::format("an example has at least one feature per slot: use {} (slots) or more", w.model.slots));
  w.model.zipf_exponent = model.number("zipf_exponent");
  if (w.model.zipf_exponent < 0)
    model.fail("zipf_exponent",
               fmt::format("must be 0 (every key equally popular) or more, got {}; CTR key popularity is "
                           "typically a Zipf law with an exponent near 1",
                           w.model.zipf_exponent));
  if (w.model.zipf_exponent > 5)
    model.fail("zipf_exponent", fmt::format("{} leaves almost every draw on the first key; use 0 to 5",
                                            w.model.zipf_exponent));
  for (const ConfigNode& h : model.list("mlp_hidden")) {
    double width = h.as_number();
    if (!(width >= 1 && width <= kMaxWidth) || width != std::floor(width))
      h.fail({}, fmt::format("a layer width is a whole number from 1 to {}, got {}", kMaxWidth, width));
    w.model.mlp_hidden.push_back(static_cast<int>(width));
  }
  model.reject_unknown_keys();

  ConfigNode tr = root.child("training");
  w.training.batch_per_gpu = int_in(tr, "batch_per_gpu", 1, kMaxBatch);
  w.training.batch_per_cpu_node = int_in_or(tr, "batch_per_cpu_node", 1, kMaxBatch, w.training.batch_per_gpu);
  w.training.minibatches_per_batch = int_in_or_auto(tr, "minibatches_per_batch", 1, kMaxMinibatches, 0);
  using topology::Precision;
  w.training.precision =
      choice_or(tr, "precision", topology::kPrecisionNames,
                {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16}, Precision::fp32);
  w.training.dense_optimizer_bytes_per_param = tr.non_negative_or("dense_optimizer_bytes_per_param", 8);
  tr.reject_unknown_keys();

  ConfigNode ps = root.child("ps");
  w.ps.dram_cache_bytes = ps.non_negative_or("dram_cache_GiB", 0) * 1073741824.0;
  w.ps.dram_cache_where = ps.where("dram_cache_GiB");
  w.ps.pipeline = ps.boolean_or("pipeline", true);
  ps.reject_unknown_keys();
  return w;
}

}  // namespace podsim::workload
