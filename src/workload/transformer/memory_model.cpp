#include "podsim/workload/transformer/memory_model.hpp"

#include <algorithm>
#include <stdexcept>

#include "podsim/workload/transformer/context_parallel.hpp"
#include "podsim/workload/transformer/layer_ops.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"

namespace podsim::workload {

double stage_params(const WorkloadConfig& w, int stage) {
  const auto& m = w.model;
  const auto& p = w.parallel;
  double t = p.tp;
  double per_layer = layer_params(m) / t;
  double params = per_layer * (m.layers / p.pp);
  double word_embedding = static_cast<double>(m.vocab) * m.hidden / t;
  if (stage == 0) params += word_embedding + static_cast<double>(m.seq_len) * m.hidden;
  if (stage == p.pp - 1) {
    params += 2.0 * m.hidden;                // final layer norm
    if (p.pp > 1) params += word_embedding;  // tied output embedding copy on the last stage
  }
  return params;
}

double layer_activation_bytes(const WorkloadConfig& w, int micro_batch, Recompute recompute) {
  // Korthikanti et al. Table 2 (16-bit activations, 1-byte dropout masks), scaled for other precisions.
  // With context parallelism a rank holds s/cp tokens (sbh / cp), and its attention scores are its
  // queries against the whole sequence: the 5as/h factor keeps the full s.
  double s = w.model.seq_len, b = micro_batch, h = w.model.hidden, a = w.model.heads, t = w.parallel.tp;
  double scale = element_bytes(w.training.precision) / 2.0;
  bool sp = w.parallel.sequence_parallel;
  double sbh = s / w.parallel.cp * b * h;
  switch (recompute) {
    case Recompute::full: return (sp ? 2 * sbh / t : 2 * sbh) * scale;
    case Recompute::selective: return (sp ? 34 * sbh / t : sbh * (10 + 24 / t)) * scale;
    case Recompute::none:
    default: return (sp ? sbh / t * (34 + 5 * a * s / h) : sbh * (10 + 24 / t + 5 * a * s / (h * t))) * scale;
  }
}

double recompute_working_bytes(const WorkloadConfig& w, int micro_batch, Recompute recompute) {
  // The layer whose backward runs holds all its activations; what it stored is already counted, the
  // rest (all of it but the input checkpoint with full recomputation, the attention core with selective)
  // is rebuilt now and held once. Counting the whole layer here (as podsim did) made full recomputation
  // need more memory than selective when a stage holds few layers.
  return layer_activation_bytes(w, micro_batch, Recompute::none) -
         layer_activation_bytes(w, micro_batch, recompute);
}

double zero_shard_ranks(const ParallelConfig& p) {
  // Context-parallel ranks hold the same weights and shard along with their data-parallel rank.
  return static_cast<double>(p.shard_group > 0 ? p.shard_group : p.dp) * p.cp;
}

double zero3_gathered_params(const WorkloadConfig& w, int stage) {
  // FSDP wraps each transformer block as one unit and keeps at most two gathered at a time: the one
  // computing and the next, prefetched (forward_prefetch / BACKWARD_PRE). DeepSpeed ZeRO-3 similarly
  // bounds live gathered parameters by stage3_prefetch_bucket_size / stage3_max_live_parameters, a few
  // layers' worth. The largest unit of a stage is a layer or, on the first and last stage, the word
  // embedding; never more than the stage itself.
  constexpr double kLiveUnits = 2;
  const auto& m = w.model;
  double largest = layer_params(m) / w.parallel.tp;
  bool has_embedding = stage == 0 || stage == w.parallel.pp - 1;
  if (has_embedding) largest = std::max(largest, static_cast<double>(m.vocab) * m.hidden / w.parallel.tp);
  return std::min(kLiveUnits * largest, stage_params(w, stage));
}

std::vector<MemoryBreakdown> stage_memory(const WorkloadConfig& w, int micro_batch, int virtual_stages,
                                          const std::vector<int>& peak_in_flight,
                                          const calibration::DeviceProfile& profile) {
  const auto& p = w.parallel;
  double eb = element_bytes(w.training.precision);
  double dp = zero_shard_ranks(p);  // ZeRO divides by the shard group
  long long chunks = static_cast<long long>(p.pp) * virtual_stages;
  if (virtual_stages < 1 || w.model.layers % chunks)
    throw std::logic_error("stage_memory: the layers do not split evenly into pp x virtual_stages chunks");
  double layers_per_chunk = static_cast<double>(w.model.layers / chunks);
  double stored = layer_activation_bytes(w, micro_batch, w.training.recompute);
  double working = recompute_working_bytes(w, micro_batch, w.training.recompute);
  double local_tokens = static_cast<double>(w.model.seq_len) / p.cp * micro_batch;  // s/cp per rank
  double sbh = local_tokens * w.model.hidden;
  std::vector<MemoryBreakdown> out;
  for (int s = 0; s < p.pp; ++s) {
    double params = stage_params(w, s);
    MemoryBreakdown mb;
    mb.weights = params * eb / (p.zero >= 3 ? dp : 1);
    mb.gradients = params * w.training.main_grad_bytes / (p.zero >= 2 ? dp : 1);
    double optimizer_per_param = eb < 4 ? 12 : 8;  // fp32 master copy (mixed precision) + Adam m and v
    mb.optimizer = params * optimizer_per_param / (p.zero >= 1 ? dp : 1);
    int in_flight = s < static_cast<int>(peak_in_flight.size()) ? peak_in_flight[s] : 1;
    mb.activations = in_flight * layers_per_chunk * stored + working;
    if (s == 0) mb.activations += in_flight * sbh;  // embedding dropout masks
    if (s == p.pp - 1)                              // logits and fp32 softmax of the microbatch in flight
      mb.activations += local_tokens * w.model.vocab / p.tp * (eb + 4 + 4);
    mb.buffers = 2 * 2 * sbh * eb;                  // p2p send and receive buffers, both directions
    mb.buffers += cp_buffer_bytes(w, micro_batch);  // context parallelism: KV blocks in flight
    // ZeRO-3: the other ranks' shards of the units being computed are gathered in; the local shard is
    // already in `weights`, so weights + buffer never exceed the unsharded weights.
    if (p.zero >= 3) mb.buffers += zero3_gathered_params(w, s) * (1 - 1 / dp) * eb;
    mb.framework = profile.framework_memory_bytes;
    out.push_back(mb);
  }
  return out;
}

}  // namespace podsim::workload
