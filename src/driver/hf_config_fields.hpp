// The HuggingFace config fields hf_config.cpp does not turn into overrides: those that do not change a
// training step (token ids, initialisation, inference settings), and the layer structures podsim cannot
// represent (errors) or represents only approximately (warnings). Private to the driver.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "podsim/driver/job_import.hpp"

namespace podsim::driver::hf_fields {

// Whether the MLP of this architecture is gated (three h x f matrices): the SiLU MLPs of the Llama family
// (Llama, Mistral, Mixtral, Qwen, DeepSeek, ...) and Gemma's gated GELU; GPT-2 style gelu is not.
bool gated_mlp(const std::string& model_type, const std::string& hidden_act);

// The model_type values this reader's mapping was checked against.
bool checked_architecture(const std::string& model_type);

// Token ids, dtype, initialisation, RoPE base, inference-only and router-loss fields: none changes the
// cost of a training step.
bool needs_no_reading(const std::string& key);

// InputError for structures podsim cannot simulate: Mamba / SSM or hybrid layer patterns, per-layer
// heterogeneous blocks, MoE layer lists it cannot express (mlp_only_layers, decoder_sparse_step > 1).
void reject_unrepresentable(const nlohmann::json& config, const std::string& file);

// Warnings (and notes) for what podsim approximates: sliding-window or chunked attention layers,
// attention sinks, QK-norm, Q/K/V-only biases, rope_scaling, a quantization_config.
void warn_unrepresentable(const nlohmann::json& config, const std::string& file,
                          const std::string& model_type, JobImport& out);

}  // namespace podsim::driver::hf_fields
