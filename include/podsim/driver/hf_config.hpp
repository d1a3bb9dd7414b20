// A HuggingFace transformers model config (config.json) as transformer_lm `model.*` / `moe.*` overrides.
//
// Read: num_hidden_layers, hidden_size, num_attention_heads, num_key_value_heads, head_dim,
// intermediate_size, vocab_size, hidden_act (+ the architecture: gated SiLU MLPs of Llama / Mistral / Qwen /
// DeepSeek become swiglu, GPT-2 style gelu stays gelu), rms_norm_eps / layer_norm_epsilon (the norm),
// tie_word_embeddings, attention_bias / mlp_bias, dropout; MoE: num_local_experts / num_experts /
// n_routed_experts, num_experts_per_tok, moe_intermediate_size, n_shared_experts /
// shared_expert_intermediate_size, first_k_dense_replace, moe_layer_freq / decoder_sparse_step,
// scoring_func; DeepSeek MLA: q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim,
// num_nextn_predict_layers. GPT-2's names (n_layer, n_embd, n_head, n_inner, n_positions) too.
// Not taken: max_position_embeddings (the context limit, not the training sequence: model.seq_len stays
// the workload's). Hybrid Mamba / SSM layers and per-layer MLP lists are errors; sliding-window layers,
// attention sinks, QK-norm and other shapes podsim costs differently are warnings naming the field and
// what podsim does instead; every key it does not know is listed in one warning.
#pragma once

#include <string>

#include "podsim/driver/job_import.hpp"

namespace podsim::driver {

// Throws InputError naming the file and the field: unreadable file, not JSON, a field of the wrong type or
// out of range, a layer structure podsim cannot represent.
JobImport read_hf_config(const std::string& path);
JobImport parse_hf_config(const std::string& json_text, const std::string& file);

}  // namespace podsim::driver
