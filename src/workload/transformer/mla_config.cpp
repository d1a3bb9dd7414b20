// Reading and checking the MLA / MTP keys of a transformer_lm model section (mla_math.hpp).
#include <fmt/format.h>

#include "podsim/core/config_choice.hpp"
#include "podsim/core/config_node.hpp"
#include "podsim/workload/transformer/mla_math.hpp"

namespace podsim::workload {
namespace {

constexpr const char* kMlaKeys[] = {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
                                    "v_head_dim"};
constexpr long long kMaxDim = 1 << 20;

// A positive dimension no larger than kMaxDim (absurd values must not reach the arithmetic).
long long dimension(const ConfigNode& model, const char* key, const char* what) {
  if (!model.has(key))
    model.fail(key,
               fmt::format("attention: mla needs model.{} ({}; DeepSeek-V3: q_lora_rank 1536, "
                           "kv_lora_rank 512, qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128)",
                           key, what));
  long long v = model.integer_in_or(key, -kMaxDim, kMaxDim, 0);
  if (v <= 0) model.fail(key, fmt::format("{} must be a positive integer ({}), got {}", key, what, v));
  return v;
}

void read_mla_dimensions(const ConfigNode& model, ModelConfig& m) {
  // q_lora_rank 0 (or absent) = queries projected from the hidden state directly (DeepSeek-V2-Lite).
  m.q_lora_rank = model.integer_in_or("q_lora_rank", 0, kMaxDim, 0);
  m.kv_lora_rank = dimension(model, "kv_lora_rank", "width of the compressed key/value latent c_kv");
  m.qk_nope_head_dim = dimension(model, "qk_nope_head_dim", "per-head query/key width without RoPE");
  m.qk_rope_head_dim = dimension(model, "qk_rope_head_dim", "per-head decoupled RoPE query/key width");
  m.v_head_dim = dimension(model, "v_head_dim", "per-head value width");
  // MLA has no query groups: after the up-projection every head has its own key and value. kv_heads and
  // head_dim describe MHA/GQA heads; stating them with mla would be silently ignored, so they are refused.
  for (const char* key : {"kv_heads", "head_dim"})
    if (model.has(key))
      model.fail(key,
                 fmt::format("model.{} describes multi-head attention; with attention: mla the heads are "
                             "given by qk_nope_head_dim, qk_rope_head_dim and v_head_dim: remove {}",
                             key, key));
  if (m.linear_bias)
    model.fail("linear_bias",
               "attention: mla is costed as DeepSeek defines it, without biases on its "
               "projections; set model.linear_bias: false");
  if (m.position_embedding != PositionEmbedding::rope)
    model.fail("position_embedding",
               "attention: mla carries positions in its decoupled RoPE part "
               "(qk_rope_head_dim); set model.position_embedding: rope");
  m.kv_heads = m.heads;       // every head has its own K and V after the up-projection
  m.head_dim = m.v_head_dim;  // the width per head the output projection reads
}

}  // namespace

void read_mla_keys(const ConfigNode& model, ModelConfig& m) {
  m.attention_type = choice_or(model, "attention", kAttentionTypeNames, AttentionType::mha);
  if (m.attention_type == AttentionType::mla) {
    read_mla_dimensions(model, m);
  } else {
    for (const char* key : kMlaKeys)
      if (model.has(key))
        model.fail(key, fmt::format("model.{} is a multi-head latent attention dimension; set "
                                    "model.attention: mla to use it, or remove it",
                                    key));
  }
  m.mtp_layers = static_cast<int>(model.integer_in_or("mtp_layers", 0, 64, 0));
}

void validate_mla(const WorkloadConfig& w, const ConfigNode& root) {
  const auto& m = w.model;
  if (w.parallel.cp > 1 && (is_mla(m) || m.mtp_layers > 0)) {
    ConfigNode model = root.child("model");
    model.fail(is_mla(m) ? "attention" : "mtp_layers",
               fmt::format("context parallelism (parallel.cp={}) is not modelled with {}; use cp: 1",
                           w.parallel.cp, is_mla(m) ? "attention: mla" : "multi-token prediction"));
  }
}

}  // namespace podsim::workload
