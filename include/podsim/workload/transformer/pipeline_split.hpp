#pragma once
// How Megatron-Core splits the transformer layers over pipeline stages and model chunks. By default every
// chunk holds layers / (pp * virtual_stages) layers. With `account_for_embedding_in_pipeline_split` /
// `account_for_loss_in_pipeline_split` (Megatron-Core TransformerConfig; NeMo's Llama 3.1 405B recipe sets
// both, so its 126 layers + 2 = 128 slots split into pp 8 x vp 8 chunks of 2) the embedding and the loss
// each count as one layer slot: layers + flags slots split evenly into pp * virtual_stages chunks, and the
// first chunk of the first stage (embedding) and the last chunk of the last stage (loss) hold one
// transformer layer fewer (megatron/core/transformer/transformer_block.py get_num_layers_to_build).
// podsim keys: parallel.embedding_in_pipeline_split / parallel.loss_in_pipeline_split. With
// parallel.pipeline_layout (pipeline_layout.hpp) every chunk holds what the layout says instead, and a
// stage's layers are the sum over the virtual_stages chunks the run uses.
#include "podsim/core/config_node.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {

// Layer slots of the split: layers, plus one each for the embedding and the loss when they are counted.
long long pipeline_slots(const WorkloadConfig& w);

// Transformer layers in model chunk `chunk` (0 .. virtual_stages-1) of pipeline stage `stage`.
int chunk_layers(const WorkloadConfig& w, int virtual_stages, int stage, int chunk);

// The first (global) transformer layer of that chunk: Megatron's interleaved order puts chunk c of stage s
// at position c * pp + s of the model.
long long chunk_first_layer(const WorkloadConfig& w, int virtual_stages, int stage, int chunk);

// Transformer layers of pipeline stage `stage` (all its chunks).
int stage_layers(const WorkloadConfig& w, int stage);

// Whether virtual_stages model chunks per stage split the slots evenly with at least one layer each.
bool splits_evenly(const WorkloadConfig& w, int virtual_stages);

// Input errors for a split that cannot run (slots not divisible by pp x virtual_stages, a chunk with no
// transformer layer); `v` is the virtual_stages to check (1 under `auto`).
void check_pipeline_split(const WorkloadConfig& w, int v, const ConfigNode& par);

}  // namespace podsim::workload
