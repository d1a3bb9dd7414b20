// Rules a transformer_lm model section must satisfy, alone and when split over tensor parallelism.
#pragma once

#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {

// Shape rules independent of the parallel layout: kv_heads divides heads, head_dim and hidden agree.
// InputError at the model key (file:line, what is valid).
void validate_model_shape(const ModelConfig& m, const ConfigNode& model);

// Megatron-Core splits query heads and key/value groups over the tensor-parallel ranks
// (num_query_groups % tp == 0; it does not replicate KV heads): InputError listing the valid tp.
void validate_model_split(const ModelConfig& m, const ConfigNode& model, int tp);

// For machine models that cost only the GPT-3 layer (the wafer kind): InputError at the first model key
// whose value is not the GPT default (kv_heads = heads, head_dim = hidden/heads, gelu, layernorm, tied,
// learned positions, biases), naming `machine` as the model that does not support it.
void require_gpt_layer(const ModelConfig& m, const ConfigNode& model, const char* machine);

}  // namespace podsim::workload
