#include "podsim/workload/transformer/transformer_math.hpp"

namespace podsim::workload {

double layer_params(const ModelConfig& m) {
  double h = m.hidden, f = m.ffn_hidden;
  // QKV (3h^2 + 3h), projection (h^2 + h), fc1 (h f + f), fc2 (f h + h), two layer norms (4h).
  return 4 * h * h + 2 * h * f + 3 * h + h + f + h + 4 * h;
}

double embedding_params(const ModelConfig& m) {
  return static_cast<double>(m.vocab) * m.hidden + static_cast<double>(m.seq_len) * m.hidden;
}

double total_params(const ModelConfig& m) {
  return m.layers * layer_params(m) + embedding_params(m) + 2.0 * m.hidden;  // + final layer norm
}

double layer_forward_flops(const ModelConfig& m, double sequences) {
  double tokens = sequences * m.seq_len, h = m.hidden, f = m.ffn_hidden, s = m.seq_len;
  double gemms = 2 * tokens * (3 * h * h + h * h + 2 * h * f);  // QKV, projection, fc1, fc2
  double attention = 2 * 2 * tokens * s * h;                    // Q K^T and (softmax) V
  return gemms + attention;
}

double logits_forward_flops(const ModelConfig& m, double sequences) {
  return 2.0 * sequences * m.seq_len * m.hidden * m.vocab;
}

double megatron_eq3_flops(const ModelConfig& m, double global_batch) {
  // 4 layer passes (forward, recomputed forward, backward = 2 forwards) + 3 logits passes.
  return 4 * m.layers * layer_forward_flops(m, global_batch) + 3 * logits_forward_flops(m, global_batch);
}

double model_flops(const ModelConfig& m, double global_batch) {
  return 3 * m.layers * layer_forward_flops(m, global_batch) + 3 * logits_forward_flops(m, global_batch);
}

double hardware_flops(const ModelConfig& m, double global_batch, Recompute recompute) {
  double flops = model_flops(m, global_batch);
  if (recompute == Recompute::full) flops += m.layers * layer_forward_flops(m, global_batch);
  if (recompute == Recompute::selective)  // only the attention core (Q K^T, softmax, (softmax) V) is redone
    flops += m.layers * 4.0 * global_batch * m.seq_len * m.seq_len * m.hidden;
  return flops;
}

}  // namespace podsim::workload
