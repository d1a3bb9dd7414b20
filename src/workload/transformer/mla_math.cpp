// Closed forms of multi-head latent attention and multi-token prediction (mla_math.hpp).
#include "podsim/workload/transformer/mla_math.hpp"

#include "podsim/workload/transformer/transformer_math.hpp"

namespace podsim::workload {

bool is_mla(const ModelConfig& m) {
  return m.attention_type == AttentionType::mla;
}

double mla_qk_head_dim(const ModelConfig& m) {
  return static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim);
}

double mla_gemm_weights(const ModelConfig& m) {
  double h = m.hidden, a = m.heads, qk = mla_qk_head_dim(m), rope = m.qk_rope_head_dim;
  double ql = m.q_lora_rank, kvl = m.kv_lora_rank, nope = m.qk_nope_head_dim, v = m.v_head_dim;
  double q = ql > 0 ? h * ql + ql * a * qk : h * a * qk;  // W_DQ + W_UQ, or W_Q
  double kv = h * (kvl + rope) + kvl * a * (nope + v);    // W_DKV (latent + shared k_rope) + W_UKV
  return q + kv + a * v * h;                              // + W_O
}

double mla_norm_params(const ModelConfig& m) {
  // DeepSeek's latent norms are RMSNorms (a scale per element) whatever model.norm says of the layer norms.
  return static_cast<double>(m.q_lora_rank) + static_cast<double>(m.kv_lora_rank);
}

double mla_attention_flops_per_sequence(const ModelConfig& m, bool causal) {
  double s = m.seq_len;
  return 2.0 * s * s * m.heads * (mla_qk_head_dim(m) + m.v_head_dim) * (causal ? 0.5 : 1.0);
}

double mtp_params(const ModelConfig& m) {
  double h = m.hidden, norm = m.norm == Norm::layernorm ? 2 * h : h;
  return m.mtp_layers * (layer_params(m) + 2 * h * h + 3 * norm);
}

double mtp_forward_flops(const ModelConfig& m, double sequences, bool causal) {
  double tokens = sequences * m.seq_len, h = m.hidden;
  return m.mtp_layers * (layer_forward_flops(m, sequences, causal) + 2 * tokens * 2 * h * h +
                         logits_forward_flops(m, sequences));
}

}  // namespace podsim::workload
