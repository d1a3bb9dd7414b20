// Megatron-Core's selective recomputation by module: `training.recompute_modules` with
// `training.recompute: selective` (Megatron-LM megatron/core/transformer/transformer_config.py,
// TransformerConfig.recompute_modules; --recompute-granularity selective --recompute-modules ...).
// Its choices: "core_attn" (the default), "moe_act", "layernorm", "mla_up_proj", "mlp", "moe",
// "shared_experts". podsim models three of them:
//   - core_attn: the attention core (Q K^T, softmax, (softmax) V) is rerun; its s x s tensors (or flash's
//     logsumexp) are not stored (normal checkpointing).
//   - mla_up_proj: MLA's q and kv up-projections and the RoPE application are rerun
//     (MLASelfAttention.get_query_key_value_tensors wraps qkv_up_proj_and_rope_apply in
//     tensor_parallel.CheckpointWithoutOutput): the attention core's Q, K, V are freed after the core has
//     consumed them and rebuilt in the backward; the checkpoint keeps its inputs, the normed latents (bf16),
//     in place of the up-projections' own saved (under fp8: quantized) inputs.
//   - mlp: the dense MLP submodule is rerun (TransformerLayer: recompute_mlp only when the layer's mlp is not
//     an MoELayer, so MoE layers are unaffected), normal checkpointing of its input. With Transformer
//     Engine's fused layernorm-linear the pre-MLP norm is inside the MLP, so the checkpoint input is the
//     norm's input, already counted: the MLP's fc1 input, activation input and fc2 input are freed.
//   - moe_act: the routed experts' activation function is rerun (TEGroupedMLP / GroupedMLP wrap it in
//     tensor_parallel.CheckpointWithoutOutput when "moe_act" is in the list): its output, fc2's input,
//     is freed after fc2 has consumed it and rebuilt in the backward from fc1's output, which is stored
//     anyway. MoE layers only (a `moe:` section is required).
//   - layernorm: the norms that are separate modules are rerun (TransformerLayer recompute_input_layernorm
//     / recompute_pre_mlp_layernorm, CheckpointWithoutOutput; an IdentityOp norm is skipped). Under
//     Transformer Engine's layer spec the attention norm is fused into the QKV linear (IdentityOp), and so
//     is a dense layer's pre-MLP norm; a MoE layer's pre-MLP norm is a separate TENorm (the router and the
//     dispatcher both read its output). So: the MoE layers' pre-MLP norm output (the router's and the
//     dispatcher's input) is freed and rebuilt; its input, the residual, is stored anyway. MoE layers only.
// The others (moe, shared_experts) are rejected with a clear error until they are modelled.
#pragma once

#include "podsim/core/config_node.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {

// Reads training.recompute_modules (a list of module names; default [core_attn]). `recompute` is the
// already-read training.recompute; the list is an error without selective, for a module podsim does not
// model, for mla_up_proj without model.attention: mla, and without core_attn under context parallelism.
// A list a --set of recompute leaves unused is a warning, appended to `warnings`.
RecomputeModules read_recompute_modules(const ConfigNode& train, Recompute recompute, const ModelConfig& m,
                                        const ParallelConfig& p, std::vector<std::string>& warnings);

// The check that depends on the parallel layout (core_attn under context parallelism), again for each
// candidate of a search, where recompute and cp change after the file was read (`train`: the node named).
void check_recompute_modules(const RecomputeModules& r, Recompute recompute, const ParallelConfig& p,
                             const ConfigNode& train);

// Whether the recomputation of `w` redoes each module (full recomputation redoes everything; these
// answer for selective only).
bool recomputes_core_attention(const WorkloadConfig& w);
bool recomputes_mla_up_proj(const WorkloadConfig& w);
bool recomputes_dense_mlp(const WorkloadConfig& w);
bool recomputes_moe_act(const WorkloadConfig& w);   // moe_act on a model with a moe: section
bool recomputes_moe_norm(const WorkloadConfig& w);  // layernorm on a model with a moe: section

// FLOPs per step the selective recomputation runs beyond the attention core of every layer (what
// hardware_flops counts for selective): + the recomputed MLA up-projections and dense MLPs, - the attention
// core when core_attn is not in the list. 0 unless recompute: selective.
double selective_recompute_flops_delta(const WorkloadConfig& w, double global_batch, long long moe_layers);

}  // namespace podsim::workload
