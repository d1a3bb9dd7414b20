#include "podsim/workload/ctr_config.hpp"

#include <fmt/format.h>

#include <cmath>

#include "podsim/core/config_node.hpp"

namespace podsim::workload {

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
  t.dimension = static_cast<int>(emb.positive_integer("dimension"));
  t.bytes_per_value = emb.positive_or("bytes_per_value", 4);
  t.optimizer_bytes_per_value = emb.non_negative_or("optimizer_bytes_per_value", 4);
  t.key_bytes = emb.non_negative_or("key_bytes", 8);
  emb.reject_unknown_keys();
  w.model.slots = static_cast<int>(model.positive_integer("slots"));
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
    if (width < 1 || width != std::floor(width))
      h.fail({}, fmt::format("a layer width is a whole number of at least 1, got {}", width));
    w.model.mlp_hidden.push_back(static_cast<int>(width));
  }
  model.reject_unknown_keys();

  ConfigNode tr = root.child("training");
  w.training.batch_per_gpu = static_cast<int>(tr.positive_integer("batch_per_gpu"));
  w.training.batch_per_cpu_node =
      static_cast<int>(tr.positive_integer_or("batch_per_cpu_node", w.training.batch_per_gpu));
  w.training.minibatches_per_batch =
      static_cast<int>(tr.positive_integer_or_auto("minibatches_per_batch", 0));
  std::string precision = tr.choice_or("precision", {"fp32", "tf32", "fp16", "bf16"}, "fp32");
  w.training.precision = topology::parse_precision(precision);
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
