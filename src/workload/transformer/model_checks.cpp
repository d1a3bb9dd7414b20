#include "podsim/workload/transformer/model_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "podsim/core/config_node.hpp"

namespace podsim::workload {
namespace {

std::string common_divisors(long long a, long long b) {
  std::string s;
  for (long long d = 1; d <= std::min(a, b); ++d)
    if (a % d == 0 && b % d == 0) s += (s.empty() ? "" : ", ") + std::to_string(d);
  return s;
}

// A value set with --set (ConfigNode::where reports those against the flag).
bool overridden(const ConfigNode& model, const char* key) {
  return model.where(key).rfind("--set", 0) == 0;
}

}  // namespace

void validate_model_shape(const ModelConfig& m, const ConfigNode& model) {
  if (m.heads % m.kv_heads)
    model.fail("kv_heads", fmt::format("kv_heads={} must divide heads={} (each key/value head serves a group "
                                       "of query heads); valid: {}",
                                       m.kv_heads, m.heads, common_divisors(m.heads, m.heads)));
  // Without an explicit head_dim the heads split hidden; with one, Megatron's kv_channels, the attention
  // width heads*head_dim may differ from hidden (the output projection maps it back).
  if (!model.has("head_dim") && m.hidden % m.heads)
    model.fail("hidden", fmt::format("hidden {} is not divisible by heads {}; set model.head_dim to give the "
                                     "head width explicitly",
                                     m.hidden, m.heads));
}

void validate_model_split(const ModelConfig& m, const ConfigNode& model, int tp) {
  if (m.heads % tp)
    model.fail("heads", fmt::format("{} attention heads cannot be split over tp={}; tp must divide the heads "
                                    "(valid tp: {})",
                                    m.heads, tp, common_divisors(m.heads, m.heads)));
  if (m.kv_heads % tp)
    model.fail("kv_heads",
               fmt::format("kv_heads={} key/value heads cannot be split over tp={}: Megatron-Core requires "
                           "num_query_groups % tp == 0 (it does not replicate KV heads); valid tp: {}",
                           m.kv_heads, tp, common_divisors(m.kv_heads, m.heads)));
}

void require_gpt_layer(const ModelConfig& m, const ConfigNode& model, const char* machine) {
  auto reject = [&](const char* key, const char* valid) {
    model.fail(key, fmt::format("the {} model costs the GPT-3 layer only; remove model.{} or set it to {}",
                                machine, key, valid));
  };
  if (m.attention_type != AttentionType::mha) reject("attention", "mha");
  if (m.mtp_layers != 0) reject("mtp_layers", "0");
  if (m.kv_heads != m.heads) reject("kv_heads", "heads");
  if (m.head_dim * m.heads != m.hidden) reject("head_dim", "hidden/heads");
  if (m.mlp != Mlp::gelu) reject("mlp", "gelu");
  if (m.norm != Norm::layernorm) reject("norm", "layernorm");
  if (!m.tied_embeddings) reject("tied_embeddings", "true");
  if (m.position_embedding != PositionEmbedding::learned) reject("position_embedding", "learned");
  if (!m.linear_bias) reject("linear_bias", "true");
}

std::vector<std::string> inconsistent_derived_keys(const ConfigNode& model, const ModelConfig& m) {
  std::vector<std::string> out;
  auto stated_and_kept = [&](const char* key) { return model.has(key) && !overridden(model, key); };
  auto warn = [&](const char* key, long long value, const std::string& why) {
    out.push_back(fmt::format("{}: {} is kept from the file, but {}", model.where(key), value, why));
  };
  bool hidden = overridden(model, "hidden"), heads = overridden(model, "heads");
  if (hidden && stated_and_kept("ffn_hidden") && m.ffn_hidden != 4 * m.hidden)
    warn("ffn_hidden", m.ffn_hidden,
         fmt::format("--set model.hidden={} would derive {} (4 x hidden); set model.ffn_hidden too", m.hidden,
                     4 * m.hidden));
  if ((hidden || heads) && stated_and_kept("head_dim") && m.head_dim * m.heads != m.hidden)
    warn("head_dim", m.head_dim,
         fmt::format("hidden/heads = {}/{} would derive {}; set model.head_dim too", m.hidden, m.heads,
                     m.heads ? m.hidden / m.heads : 0));
  if (heads && stated_and_kept("kv_heads") && m.kv_heads != m.heads)
    warn("kv_heads", m.kv_heads,
         fmt::format("--set model.heads={} changes the query heads per group to {}; set model.kv_heads too",
                     m.heads, m.kv_heads ? m.heads / m.kv_heads : 0));
  return out;
}

}  // namespace podsim::workload
