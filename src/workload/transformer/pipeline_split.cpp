#include "podsim/workload/transformer/pipeline_split.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "podsim/workload/transformer/pipeline_layout.hpp"

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

// The parallel.pipeline_layout that applies to pp x virtual_stages chunks, or nullptr for the even split.
// The reader resolved virtual_stages against the layouts, so a missing one is a caller's bug.
const std::vector<int>* given_layout(const WorkloadConfig& w, int virtual_stages) {
  if (!has_layout(w.parallel)) return nullptr;
  if (const auto* l = layout_for(w.parallel, virtual_stages)) return l;
  throw std::logic_error(
      fmt::format("pipeline split: no pipeline_layout has pp {} x {} chunks", w.parallel.pp, virtual_stages));
}

}  // namespace

int chunk_layers(const WorkloadConfig& w, int virtual_stages, int stage, int chunk) {
  if (const auto* l = given_layout(w, virtual_stages)) return l->at(chunk * w.parallel.pp + stage);
  long long layers = slots_per_chunk(w, virtual_stages);
  if (w.parallel.embedding_in_pipeline_split && stage == 0 && chunk == 0) --layers;
  if (w.parallel.loss_in_pipeline_split && stage == w.parallel.pp - 1 && chunk == virtual_stages - 1)
    --layers;
  return static_cast<int>(layers);
}

long long chunk_first_layer(const WorkloadConfig& w, int virtual_stages, int stage, int chunk) {
  long long position = static_cast<long long>(chunk) * w.parallel.pp + stage;
  if (const auto* l = given_layout(w, virtual_stages)) {
    long long before = 0;  // the layers of every chunk ahead of this one in Megatron's order
    for (long long i = 0; i < position; ++i) before += l->at(i);
    return before;
  }
  long long first = position * slots_per_chunk(w, virtual_stages);
  // Every chunk after the first starts one layer earlier when the embedding took a slot of the first.
  if (w.parallel.embedding_in_pipeline_split && position > 0) --first;
  return first;
}

int stage_layers(const WorkloadConfig& w, int stage) {
  // A layout gives each chunk its own count: the stage holds the sum over the chunks the run uses.
  if (has_layout(w.parallel)) {
    int v = w.parallel.virtual_stages, layers = 0;
    for (int c = 0; c < v; ++c) layers += chunk_layers(w, v, stage, c);
    return layers;
  }
  // Whatever the chunking, a stage holds slots / pp slots minus the embedding's or the loss's.
  return chunk_layers(w, 1, stage, 0);
}

bool splits_evenly(const WorkloadConfig& w, int virtual_stages) {
  // A layout says what each chunk holds (a chunk may hold only the MTP module and the loss).
  if (has_layout(w.parallel)) return virtual_stages >= 1 && layout_for(w.parallel, virtual_stages) != nullptr;
  if (!w.parallel.pipeline_layouts.empty()) return virtual_stages == 1;  // pp 1: one chunk
  long long chunks = static_cast<long long>(w.parallel.pp) * virtual_stages;
  // A chunk may hold the embedding or the loss alone: Megatron-Core asks only that the slots divide
  // (TransformerConfig's account_for_*_in_pipeline_split checks), and Llama 3 405B ran 126 layers + 2 slots
  // as 128 one-slot chunks, the first holding only the embedding, the last only the output and loss.
  return virtual_stages >= 1 && pipeline_slots(w) % chunks == 0;
}

void check_pipeline_split(const WorkloadConfig& w, int v, const ConfigNode& par) {
  const auto& p = w.parallel;
  if (splits_evenly(w, v)) return;
  if (!p.pipeline_layouts.empty())
    par.fail("pipeline_layout",
             fmt::format("no layout has pp*virtual_stages = {}*{} model chunks; give one with that many "
                         "'|'-separated chunks",
                         p.pp, v));
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
  par.fail(p.virtual_stages_auto || v == 1 ? "pp" : "virtual_stages",
           fmt::format("{} is not divisible by pp*virtual_stages = {}*{}; valid pp*virtual_stages: {}{}",
                       what, p.pp, v, fmt::join(valid, ", "),
                       counted.empty() ? "; Megatron's account_for_embedding/loss_in_pipeline_split is "
                                         "parallel.embedding_in_pipeline_split / loss_in_pipeline_split"
                                       : ""));
}

}  // namespace podsim::workload
