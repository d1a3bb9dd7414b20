#include "podsim/workload/transformer/transformer_math.hpp"

#include <algorithm>

#include "podsim/workload/transformer/mla_math.hpp"

namespace podsim::workload {
namespace {

// Matrices of the MLP, each h x f: fc1 and fc2, plus the gate of SwiGLU (fused into fc1 in Megatron-Core).
double mlp_matrices(const ModelConfig& m) {
  return m.mlp == Mlp::swiglu ? 3 : 2;
}

double norm_params(const ModelConfig& m) {
  return m.norm == Norm::layernorm ? 2.0 * m.hidden : 1.0 * m.hidden;  // scale (+ bias)
}

// Weights of the GEMMs of one layer (what a token multiplies through): Q, K, V, output projection, MLP.
double layer_gemm_weights(const ModelConfig& m) {
  if (is_mla(m)) return mla_gemm_weights(m) + mlp_matrices(m) * m.hidden * m.ffn_hidden;
  double h = m.hidden, a = m.heads, g = m.query_groups(), d = m.dim(), f = m.ffn_hidden;
  return h * (a + 2 * g) * d + a * d * h + mlp_matrices(m) * h * f;
}

// Score and value FLOPs of one layer's forward per sequence: Q K^T and (softmax) V over all query heads.
// The full count is every (query, key) pair of the s x s scores, what unfused kernels compute whatever the
// mask; the causal count halves it, or under a sliding window of W < s keys counts the pairs a query
// sees, s * (W - W (W - 1) / 2s) (Megatron-Bridge's flop_utils, the effective window context).
double attention_flops_per_sequence(const ModelConfig& m, bool causal, bool windowed = false) {
  if (is_mla(m)) return mla_attention_flops_per_sequence(m, causal);
  double s = m.seq_len, w = static_cast<double>(m.sliding_window);
  double pairs = !causal ? s * s : windowed && w < s ? s * (w - w * (w - 1) / (2 * s)) : 0.5 * s * s;
  return 2.0 * 2.0 * pairs * m.heads * m.dim();
}

// The attention core's forward FLOPs of every main-model layer (full and windowed) per sequence.
double attention_flops_all_layers(const ModelConfig& m, bool causal) {
  double windowed = static_cast<double>(windowed_layers_in(m, 0, m.layers));
  return (m.layers - windowed) * attention_flops_per_sequence(m, causal) +
         windowed * attention_flops_per_sequence(m, causal, true);
}

}  // namespace

bool windowed_layer(const ModelConfig& m, long long layer) {
  // A window as long as the sequence is full causal attention.
  if (m.sliding_window <= 0 || m.sliding_window >= m.seq_len) return false;
  return m.full_attention_every == 0 || (layer + 1) % m.full_attention_every != 0;
}

long long windowed_layers_in(const ModelConfig& m, long long first, long long count) {
  if (m.sliding_window <= 0 || m.sliding_window >= m.seq_len || count <= 0) return 0;
  if (m.full_attention_every == 0) return count;
  auto full_up_to = [&](long long n) { return n / m.full_attention_every; };  // full layers among 1..n
  return count - (full_up_to(first + count) - full_up_to(first));
}

std::optional<int> full_attention_every_of(const std::vector<bool>& windowed) {
  if (std::all_of(windowed.begin(), windowed.end(), [](bool b) { return b; })) return 0;
  for (size_t n = 1; n <= windowed.size(); ++n) {
    bool fits = true;
    for (size_t i = 0; i < windowed.size() && fits; ++i) fits = windowed[i] == ((i + 1) % n != 0);
    if (fits) return static_cast<int>(n);
  }
  return std::nullopt;
}

double layer_params(const ModelConfig& m) {
  double h = m.hidden, a = m.heads, g = m.query_groups(), d = m.dim(), f = m.ffn_hidden;
  double biases = 0;
  if (m.linear_bias)  // QKV, output projection, fc1 (2f wide for SwiGLU), fc2
    biases = (a + 2 * g) * d + h + (mlp_matrices(m) - 1) * f + h;
  return layer_gemm_weights(m) + biases + 2 * norm_params(m) + (is_mla(m) ? mla_norm_params(m) : 0);
}

double embedding_params(const ModelConfig& m) {
  double positions = m.position_embedding == PositionEmbedding::learned ? static_cast<double>(m.seq_len) : 0;
  return (static_cast<double>(m.vocab) + positions) * m.hidden;
}

double output_layer_params(const ModelConfig& m) {
  return m.tied_embeddings ? 0 : static_cast<double>(m.vocab) * m.hidden;
}

double final_norm_params(const ModelConfig& m) {
  return norm_params(m);
}

double total_params(const ModelConfig& m) {
  return m.layers * layer_params(m) + embedding_params(m) + final_norm_params(m) + output_layer_params(m);
}

double layer_forward_flops(const ModelConfig& m, double sequences, bool causal) {
  double tokens = sequences * m.seq_len;
  return 2 * tokens * layer_gemm_weights(m) + sequences * attention_flops_per_sequence(m, causal);
}

double layers_forward_flops(const ModelConfig& m, double sequences, bool causal) {
  double tokens = sequences * m.seq_len;
  return m.layers * 2 * tokens * layer_gemm_weights(m) + sequences * attention_flops_all_layers(m, causal);
}

double attention_core_forward_flops(const ModelConfig& m, double sequences, bool causal) {
  return sequences *
         (attention_flops_all_layers(m, causal) + m.mtp_layers * attention_flops_per_sequence(m, causal));
}

double logits_forward_flops(const ModelConfig& m, double sequences) {
  return 2.0 * sequences * m.seq_len * m.hidden * m.vocab;
}

double megatron_eq3_flops(const ModelConfig& m, double global_batch) {
  // 4 layer passes (forward, recomputed forward, backward = 2 forwards) + 3 logits passes.
  return 4 * layers_forward_flops(m, global_batch) + 3 * logits_forward_flops(m, global_batch);
}

double model_flops(const ModelConfig& m, double global_batch) {
  return 3 * layers_forward_flops(m, global_batch) + 3 * logits_forward_flops(m, global_batch) +
         3 * mtp_forward_flops(m, global_batch, false);
}

double model_flops_causal(const ModelConfig& m, double global_batch) {
  return 3 * layers_forward_flops(m, global_batch, true) + 3 * logits_forward_flops(m, global_batch) +
         3 * mtp_forward_flops(m, global_batch, true);
}

double hardware_flops(const ModelConfig& m, double global_batch, Recompute recompute, Attention attention) {
  bool flash = attention == Attention::flash;
  // Every layer's attention core forward, MTP layers (mla_math.hpp) included: they run and recompute like
  // the main model's layers.
  double attention_forward = attention_core_forward_flops(m, global_batch, flash);
  // model_flops counts the attention core 3x (forward + 2x backward); the flash backward runs 2.5x.
  double flops = (flash ? model_flops_causal(m, global_batch) : model_flops(m, global_batch)) +
                 (flash ? 0.5 * attention_forward : 0);
  if (recompute == Recompute::full)
    flops += layers_forward_flops(m, global_batch, flash) +
             m.mtp_layers * layer_forward_flops(m, global_batch, flash);
  if (recompute == Recompute::selective)  // only the attention core (Q K^T, softmax, (softmax) V) is redone
    flops += attention_forward;
  return flops;
}

}  // namespace podsim::workload
