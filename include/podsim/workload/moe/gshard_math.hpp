// Closed forms of the GShard MoE Transformer: parameters, the kernels one device runs per layer (costed
// with the device's compute model), all-to-all bytes and memory per device.
#pragma once

#include "podsim/calibration/compute_model.hpp"
#include "podsim/workload/moe/gshard_config.hpp"
#include "podsim/workload/transformer/layer_ops.hpp"
#include "podsim/workload/transformer/memory_model.hpp"

namespace podsim::workload {

struct GShardParams {
  double dense = 0;       // replicated on every device: attention, dense FFNs, gates, norms, embedding
  double expert = 0;      // all experts of all MoE layers
  double per_expert = 0;  // one expert of one layer: 2 * hidden * ffn_hidden
  double total() const { return dense + expert; }
};
GShardParams gshard_params(const GShardConfig& w);

// Weights one device holds: the dense ones and its experts (experts_per_device of every MoE layer).
double gshard_device_params(const GShardConfig& w);

// Bytes one device sends in one all-to-all (dispatch or combine): its groups' dispatched tensors
// [experts, capacity, hidden] = capacity_factor * top_k * tokens * hidden elements.
double gshard_all_to_all_bytes(const GShardConfig& w);

// Kernels of one layer on one device (its tokens_per_device tokens of each stack).
struct GShardLayerCosts {
  PassCost attention_forward, attention_backward;                  // encoder self-attention sublayer
  PassCost decoder_attention_forward, decoder_attention_backward;  // self + cross attention
  PassCost dense_ffn_forward, dense_ffn_backward;
  // MoE sublayer in three pieces around its two all-to-alls.
  PassCost gate_dispatch_forward;  // gating, top-k, masks, dispatch einsum
  PassCost experts_forward;        // expert FFNs on the tokens this device's experts received
  PassCost combine_forward;        // combine einsum
  PassCost gate_dispatch_backward, experts_backward, combine_backward;
  PassCost head_forward, head_backward;  // embeddings, output logits, softmax cross-entropy
};
GShardLayerCosts gshard_layer_costs(const GShardConfig& w, const calibration::ComputeModel& cm);

// FLOPs of one step summed over all devices. Model FLOPs count the matmuls a dense implementation of the
// model needs (top_k experts per token that fit in the experts' capacity: dropped tokens are no useful
// work; no capacity padding, no dispatch/combine einsums) x 3 (forward +
// backward); hardware FLOPs count what the devices execute (padding, one-hot einsums, recomputation).
double gshard_model_flops(const GShardConfig& w);
double gshard_hardware_flops(const GShardLayerCosts& c, const GShardConfig& w);

// HBM bytes of one Adafactor step over this device's weights (gshard_math.cpp says which accesses).
double gshard_adafactor_bytes(const GShardConfig& w);

// Weights, gradients, optimizer state, activations (all layers' inputs with rematerialization, every
// stored tensor without) and framework memory of one device.
MemoryBreakdown gshard_memory(const GShardConfig& w, const calibration::DeviceProfile& profile);

}  // namespace podsim::workload
