// DeepSeek's multi-head latent attention (MLA) and multi-token prediction (MTP) in closed form: the keys that
// describe them, their parameters and FLOPs. transformer_math.cpp calls these where model.attention: mla or
// model.mtp_layers > 0; MHA models never reach them.
//
// MLA (DeepSeek-V2, arXiv 2405.04434, Sec. 2.1; DeepSeek-V3, arXiv 2412.19437, Sec. 2.1.1), per layer:
//   queries:  c_q = RMSNorm(x W_DQ) [h -> q_lora_rank], q = c_q W_UQ [-> heads x (nope + rope)]
//             (q_lora_rank 0: q = x W_Q directly, as DeepSeek-V2-Lite)
//   keys/values: [c_kv, k_rope] = x W_DKV [h -> kv_lora_rank + rope] (Megatron-Core's linear_kv_down_proj),
//             [k_nope, v] = RMSNorm(c_kv) W_UKV [-> heads x (nope + v_head_dim)]; k_rope is shared by all
//             heads
//   core:     softmax(q k^T / sqrt(nope + rope)) v per head, qk head dim nope + rope, v head dim v_head_dim
//   output:   o W_O [heads x v_head_dim -> h]
// MTP (DeepSeek-V3 Sec. 2.2): module k takes the main model's last hidden state and the embedding of the
// token k ahead: h' = W_k [RMSNorm(h); RMSNorm(Emb(t))] (W_k: 2h -> h), one transformer layer, a final
// norm, and the shared output head. Embedding and output head are the main model's (shared).
#pragma once

#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {

// Reads model.attention, model.q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim and
// model.mtp_layers into `m`, and checks that they agree (InputError at the key: mla without kv_lora_rank,
// head dims <= 0, MLA keys under attention: mha, kv_heads or head_dim with mla, biases with mla).
void read_mla_keys(const ConfigNode& model, ModelConfig& m);
// Rules that involve the parallel layout: context parallelism with MLA or MTP is not modelled (InputError).
void validate_mla(const WorkloadConfig& w, const ConfigNode& root);

bool is_mla(const ModelConfig& m);
double mla_qk_head_dim(const ModelConfig& m);  // nope + rope (DeepSeek-V3: 192)
// Weights of the GEMMs of one MLA block (what a token multiplies through): W_DQ and W_UQ (or W_Q),
// W_DKV, W_UKV, W_O. This is the "MLA params" term of NVIDIA's DeepSeek-V3 FLOPs formula
// (NeMo flops_formulas.deepseekv3).
double mla_gemm_weights(const ModelConfig& m);
// The latent norms: RMSNorm over q_lora_rank (when queries are compressed) and over kv_lora_rank.
double mla_norm_params(const ModelConfig& m);
// Forward FLOPs of the attention core of one sequence: Q K^T over nope + rope and P V over v_head_dim
// per head, 2 s^2 heads (qk + v) (halved when causal).
double mla_attention_flops_per_sequence(const ModelConfig& m, bool causal);

// Weights of the MTP modules (shared embedding and output head not included): per module one layer, W_k
// (2h x h) and three norms (embedding, hidden, final).
double mtp_params(const ModelConfig& m);
// Forward FLOPs of the MTP modules over `sequences` sequences: per module its layer, W_k (2 tokens 2h h)
// and the shared output head's logits (2 tokens h V), as NVIDIA's DeepSeek-V3 formula counts them.
double mtp_forward_flops(const ModelConfig& m, double sequences, bool causal);

}  // namespace podsim::workload
