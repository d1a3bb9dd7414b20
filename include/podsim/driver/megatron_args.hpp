// A Megatron-LM launch command line (`torchrun ... pretrain_gpt.py --num-layers 32 ...`, backslash-
// newlines and all) as transformer_lm overrides: model (--num-layers, --hidden-size, --num-attention-heads,
// --group-query-attention + --num-query-groups, --ffn-hidden-size, --kv-channels, --seq-length, --swiglu,
// --normalization, --position-embedding-type, --untie-embeddings-and-output-weights, --disable-bias-linear,
// --vocab-size (padded as Megatron pads it), MoE and MLA arguments), parallelism (--tensor-, --pipeline-,
// --context-, --expert-model-parallel-size, --expert-tensor-parallel-size, virtual pipeline stages,
// --sequence-parallel, --use-distributed-optimizer, FSDP sharding, --overlap-grad-reduce /
// --overlap-param-gather, --tp-comm-overlap, --account-for-*-in-pipeline-split) and training
// (--micro-batch-size, --global-batch-size, --recompute-*, --bf16 / --fp16 / --fp8-format / --fp4-format,
// gradient accumulation and reduction precision, --attention-backend). Argument names are Megatron-LM's
// (megatron/training/arguments.py). Arguments podsim ignores (learning rate, data, checkpoints, logging)
// are listed in a note, those it knows but does not model and those it does not understand in warnings.
#pragma once

#include <string>

#include "podsim/driver/job_import.hpp"

namespace podsim::driver {

// `text` is the command line itself, or "@FILE" for a file holding it. InputError for a value of the
// wrong type (naming the argument), an unexpanded shell variable, an unterminated quote.
JobImport read_megatron_args(const std::string& text);
JobImport parse_megatron_args(const std::string& command_line, const std::string& source);

}  // namespace podsim::driver
