#include "hf_config_fields.hpp"

#include <fmt/format.h>

#include <set>

#include "podsim/core/error.hpp"

namespace podsim::driver::hf_fields {
namespace {

using nlohmann::json;

bool present(const json& c, const char* key) {
  return c.contains(key) && !c[key].is_null();
}

// Fields warn_unrepresentable / reject_unrepresentable look at, and those that never change the cost of
// a training step.
const std::set<std::string>& quiet_fields() {
  static const std::set<std::string> fields = {
      // looked at below
      "sliding_window", "use_sliding_window", "max_window_layers", "layer_types", "sliding_window_pattern",
      "attention_chunk_size", "rope_scaling", "quantization_config", "mlp_only_layers", "decoder_sparse_step",
      // token ids, dtype, versions, initialisation, inference
      "bos_token_id", "eos_token_id", "pad_token_id", "torch_dtype", "dtype", "transformers_version",
      "initializer_range", "initializer_factor", "use_cache", "pretraining_tp", "auto_map",
      "task_specific_params", "return_dict", "output_hidden_states", "output_attentions", "is_decoder",
      "id2label", "label2id",
      // positions: RoPE base and variants have no parameters and (next to the attention) no FLOPs
      "rope_theta", "rope_type", "rope_interleave", "partial_rotary_factor", "rotary_pct", "rotary_emb_base",
      "n_ctx",
      // router losses and routing details: training signal, not the shape or cost of the step
      "router_aux_loss_coef", "output_router_logits", "router_jitter_noise", "norm_topk_prob", "topk_method",
      "routed_scaling_factor", "aux_loss_alpha", "seq_aux", "ep_size",
      // GPT-2's inference and summary settings
      "scale_attn_weights", "scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn", "summary_type",
      "summary_use_proj", "summary_activation", "summary_proj_to_labels", "summary_first_dropout",
      // the layer norms' epsilon is read (it names the norm); its value changes nothing
      "model_type"};
  return fields;
}

}  // namespace

bool gated_mlp(const std::string& model_type, const std::string& hidden_act) {
  if (model_type.rfind("gemma", 0) == 0) return true;
  return hidden_act == "silu" || hidden_act == "swish";
}

bool checked_architecture(const std::string& model_type) {
  static const std::set<std::string> types = {
      "llama",       "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "deepseek_v2",
      "deepseek_v3", "gemma",   "gemma2",  "gpt2",  "gpt_oss",   "olmo2", "granite"};
  return types.count(model_type) > 0;
}

bool needs_no_reading(const std::string& key) {
  return quiet_fields().count(key) > 0;
}

void reject_unrepresentable(const json& c, const std::string& file) {
  for (const auto& [key, value] : c.items()) {
    bool hybrid = key.rfind("mamba", 0) == 0 || key.rfind("ssm_", 0) == 0 ||
                  key == "hybrid_override_pattern" || key == "layers_block_type" ||
                  key == "attn_layer_indices" || key == "attn_layer_period";
    if (hybrid && !value.is_null())
      throw InputError(
          fmt::format("{}: field '{}': a hybrid Mamba / state-space model; podsim simulates "
                      "transformer layers only (attention + MLP or MoE in every layer)",
                      file, key));
    if (key == "block_configs")
      throw InputError(
          fmt::format("{}: field 'block_configs': layers of different shapes (a heterogeneous "
                      "model); podsim's transformer_lm has one shape for every layer",
                      file));
  }
  if (present(c, "mlp_only_layers") && (!c["mlp_only_layers"].is_array() || !c["mlp_only_layers"].empty()))
    throw InputError(
        fmt::format("{}: field 'mlp_only_layers' {}: a list of dense layers among MoE ones; podsim "
                    "places dense layers first (moe.first_dense_layers) or every n-th "
                    "(moe.layer_freq) only",
                    file, c["mlp_only_layers"].dump()));
  if (present(c, "decoder_sparse_step") &&
      !(c["decoder_sparse_step"].is_number_integer() && c["decoder_sparse_step"].get<long long>() == 1))
    throw InputError(
        fmt::format("{}: field 'decoder_sparse_step' {}: Qwen-MoE makes layer i MoE when (i+1) "
                    "% step == 0; podsim's moe.layer_freq counts from layer 0 (i % freq == 0), "
                    "so only 1 (every layer MoE) carries over",
                    file, c["decoder_sparse_step"].dump()));
}

void warn_unrepresentable(const json& c, const std::string& file, const std::string& model_type,
                          JobImport& out) {
  if (present(c, "attention_chunk_size"))
    out.warnings.push_back(
        fmt::format("{}: attention_chunk_size {}: chunked attention is costed as full "
                    "causal attention",
                    file, c["attention_chunk_size"].dump()));
  if (model_type == "gpt_oss")
    out.warnings.push_back(
        fmt::format("{}: gpt_oss: the learned attention sinks and the clamped SwiGLU are "
                    "not modelled (a few element-wise FLOPs per score / activation)",
                    file));
  if (model_type == "qwen3" || model_type == "qwen3_moe" || model_type == "olmo2")
    out.warnings.push_back(
        fmt::format("{}: {} normalises queries and keys (QK-norm): its 2 x head_dim "
                    "parameters a layer and their element-wise kernels are not counted",
                    file, model_type));
  if (model_type == "qwen2" || model_type == "qwen2_moe")
    out.warnings.push_back(
        fmt::format("{}: {} has biases on the Q, K and V projections only; podsim's "
                    "model.linear_bias is all or none: took false (those biases not counted)",
                    file, model_type));
  if (present(c, "rope_scaling"))
    out.notes.push_back(
        fmt::format("{}: rope_scaling ignored: it changes positions, not the parameters or "
                    "FLOPs of a step",
                    file));
  if (present(c, "quantization_config"))
    out.notes.push_back(
        fmt::format("{}: quantization_config ignored: the training GEMM format is the "
                    "workload's training.precision",
                    file));
}

}  // namespace podsim::driver::hf_fields
