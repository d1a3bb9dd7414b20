#pragma once
// Megatron-Core's explicit pipeline layout (TransformerConfig.pipeline_model_parallel_layout, megatron/core/
// transformer/pipeline_parallel_layer_layout.py): a string naming what every model chunk holds, chunks
// separated by '|', in Megatron's chunk order (chunk c of stage s is entry c * pp + s, so the string reads
// the model front to back): E the embedding, t one transformer layer, m one multi-token-prediction module,
// L the loss (output layer). `x*n` repeats one character, `(...)*n` a group; commas are cosmetic. NVIDIA's
// DeepSeek-V3 recipes use "Et*4|(t*4|)*14tmL" (16 chunks: 4 + 14 x 4 + 1 = 61 layers) and
// "Et|(tt|)*30mL" (32 chunks, the last holding only the MTP module and the loss), which the even split of
// pipeline_split.hpp cannot express. podsim key: parallel.pipeline_layout (one string, or a list of them of
// which the one with pp x virtual_stages chunks applies, as Megatron-Bridge picks DeepSeek-V3's layout from
// its (pp, vp) table).
#include <string>
#include <vector>

#include "podsim/core/config_node.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {

// One layout: transformer layers per model chunk in Megatron's order (entry c * pp + s).
struct PipelineLayout {
  std::string text;         // as written
  std::vector<int> layers;  // transformer layers ('t') per chunk
};

// Expands and checks one layout string against the model: exactly one E, first; exactly one L, last;
// model.layers t's; model.mtp_layers m's, all in the last chunk after its transformer layers (podsim costs
// the MTP modules beside the output layer, on the last stage). Fails at `node`'s `key` naming what is valid.
PipelineLayout parse_pipeline_layout(const std::string& text, const ModelConfig& m, const ConfigNode& node,
                                     const std::string& key);

// Reads parallel.pipeline_layout (absent: the even split) into p.pipeline_layouts and resolves
// virtual_stages from it: `auto` takes the one layout whose chunk count pp divides; an explicit
// virtual_stages needs a layout of pp x virtual_stages chunks. Refuses embedding_in_pipeline_split /
// loss_in_pipeline_split beside it (the layout already places the embedding and the loss, as Megatron-Core
// refuses account_for_*_in_pipeline_split with a layout).
void read_pipeline_layout(const ConfigNode& par, const ModelConfig& m, ParallelConfig& p);

// The layout of pp x virtual_stages chunks, or nullptr when there is none (or no layout at all, or pp 1
// with one chunk: every layer in it, as Megatron-Bridge maps pp 1 to no layout).
const std::vector<int>* layout_for(const ParallelConfig& p, int virtual_stages);

// Whether a layout places the layers of this config: layouts given and a pipeline to place them in.
inline bool has_layout(const ParallelConfig& p) {
  return !p.pipeline_layouts.empty() && p.pp > 1;
}

}  // namespace podsim::workload
