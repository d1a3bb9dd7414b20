#include "podsim/workload/transformer/pipeline_split.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace podsim::workload {

long long pipeline_slots(const WorkloadConfig& w) {
  return w.model.layers + (w.parallel.embedding_in_pipeline_split ? 1 : 0) +
         (w.parallel.loss_in_pipeline_split ? 1 : 0);
}

namespace {

long long slots_per_chunk(const WorkloadConfig& w, int virtual_stages) {
  long long chunks = static_cast<long long>(w.parallel.pp) * virtual_stages;
  long long slots = pipeline_slots(w);
  if (virtual_stages < 1 || slots % chunks)
    throw std::logic_error(fmt::format("pipeline split: {} layer slots do not split into pp {} x {} chunks",
                                       slots, w.parallel.pp, virtual_stages));
  return slots / chunks;
}

}  // namespace

int chunk_layers(const WorkloadConfig& w, int virtual_stages, int stage, int chunk) {
  long long layers = slots_per_chunk(w, virtual_stages);
  if (w.parallel.embedding_in_pipeline_split && stage == 0 && chunk == 0) --layers;
  if (w.parallel.loss_in_pipeline_split && stage == w.parallel.pp - 1 && chunk == virtual_stages - 1)
    --layers;
  return static_cast<int>(layers);
}

long long chunk_first_layer(const WorkloadConfig& w, int virtual_stages, int stage, int chunk) {
  long long position = static_cast<long long>(chunk) * w.parallel.pp + stage;
  long long first = position * slots_per_chunk(w, virtual_stages);
  // Every chunk after the first starts one layer earlier when the embedding took a slot of the first.
  if (w.parallel.embedding_in_pipeline_split && position > 0) --first;
  return first;
}

int stage_layers(const WorkloadConfig& w, int stage) {
  // Whatever the chunking, a stage holds slots / pp slots minus the embedding's or the loss's.
  return chunk_layers(w, 1, stage, 0);
}

bool splits_evenly(const WorkloadConfig& w, int virtual_stages) {
  long long chunks = static_cast<long long>(w.parallel.pp) * virtual_stages;
  long long slots = pipeline_slots(w);
  if (virtual_stages < 1 || slots % chunks) return false;
  bool counted = w.parallel.embedding_in_pipeline_split || w.parallel.loss_in_pipeline_split;
  // The chunk holding the embedding or the loss needs a transformer layer besides it (two slots); with
  // both on one chunk (pp 1, one chunk) it needs three.
  long long both = w.parallel.embedding_in_pipeline_split && w.parallel.loss_in_pipeline_split && chunks == 1;
  return slots / chunks >= (counted ? 2 : 1) + both;
}

void check_pipeline_split(const WorkloadConfig& w, int v, const ConfigNode& par) {
  const auto& p = w.parallel;
  if (splits_evenly(w, v)) return;
  long long slots = pipeline_slots(w);
  std::vector<long long> valid;
  for (long long c = 1; c <= slots; ++c) {
    WorkloadConfig probe = w;
    probe.parallel.pp = static_cast<int>(c);
    if (slots % c == 0 && splits_evenly(probe, 1)) valid.push_back(c);
  }
  std::string counted;
  if (p.embedding_in_pipeline_split) counted += " + 1 (embedding_in_pipeline_split)";
  if (p.loss_in_pipeline_split) counted += " + 1 (loss_in_pipeline_split)";
  std::string what = counted.empty()
                         ? fmt::format("layers={}", w.model.layers)
                         : fmt::format("{} layer slots (layers {}{})", slots, w.model.layers, counted);
  bool divides = slots % (static_cast<long long>(p.pp) * v) == 0;
  par.fail(p.virtual_stages_auto || v == 1 ? "pp" : "virtual_stages",
           divides
               ? fmt::format("{} split into pp*virtual_stages = {}*{} chunks leaves a chunk with the "
                             "embedding or the loss but no transformer layer; use fewer chunks",
                             what, p.pp, v)
               : fmt::format("{} is not divisible by pp*virtual_stages = {}*{}; valid pp*virtual_stages: "
                             "{}{}",
                             what, p.pp, v, fmt::join(valid, ", "),
                             counted.empty() ? "; Megatron's account_for_embedding/loss_in_pipeline_split "
                                               "is parallel.embedding_in_pipeline_split / "
                                               "loss_in_pipeline_split"
                                             : ""));
}

}  // namespace podsim::workload
