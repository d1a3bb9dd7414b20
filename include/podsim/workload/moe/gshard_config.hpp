// Typed GShard mixture-of-experts workload (kind: gshard_moe): the keys of workloads/gshard-moe.yaml.
#pragma once

#include <string>

#include "podsim/topology/device_spec.hpp"

namespace podsim {
class ConfigNode;
}

namespace podsim::workload {

// GShard (Lepikhin et al. 2020): a Transformer encoder-decoder whose feed-forward sublayer is a
// mixture of experts in every `moe_every`-th layer of each stack, with top-k gating, a fixed expert
// capacity per dispatch group, experts sharded over the devices and everything else data parallel.
struct GShardConfig {
  std::string name, file;
  // model
  long long layers = 0;  // encoder + decoder layers (GShard's "36L" = 18 + 18)
  long long hidden = 0, ffn_hidden = 0, heads = 0, seq_len = 0, vocab = 0;
  long long experts = 0;
  int top_k = 2;
  double capacity_factor = 1.0;  // expert capacity = capacity_factor * top_k * group_size / experts
  int moe_every = 2;
  long long group_size = 0;  // tokens per dispatch group (local group dispatching); 0 = a device's tokens
  // parallel
  int devices = 0;  // ranks 0..devices-1 of the topology
  // training
  long long batch_tokens = 0;  // tokens per step on each side (source and target)
  topology::Precision precision = topology::Precision::bf16;
  bool rematerialization = true;
  bool adafactor = true;    // Adafactor (factored second moments, no momentum) or Adam
  double weight_bytes = 4;  // bytes per weight (fp32 master weights)
  // Bytes per stored activation element (training.activation_precision): what element-wise kernels move,
  // what layers keep and what the all-to-alls send. On TPUs the matmuls take bf16 inputs whatever this is
  // (XLA's default precision), so it does not change the GEMMs' rate.
  double activation_bytes = 2;
  double grad_reduce_bytes = 4;

  long long layers_per_stack() const { return layers / 2; }
  long long moe_layers_per_stack() const { return layers_per_stack() / moe_every; }
  long long moe_layers() const { return 2 * moe_layers_per_stack(); }
  long long tokens_per_device() const { return batch_tokens / devices; }
  long long group_tokens() const { return group_size > 0 ? group_size : tokens_per_device(); }
  long long groups_per_device() const { return tokens_per_device() / group_tokens(); }
  // Capacity of one expert in one group (tokens), at least 1.
  double expert_capacity() const;
  // Experts held by one device (>= 1) and devices sharing one expert (>= 1): experts are sharded over
  // the devices, or, with fewer experts than devices, each expert is replicated over devices / experts.
  long long experts_per_device() const { return experts >= devices ? experts / devices : 1; }
  long long devices_per_expert() const { return devices > experts ? devices / experts : 1; }
};

// Reads and validates a gshard_moe workload; `devices` is the topology's device count.
GShardConfig read_gshard_workload(const ConfigNode& root, int devices);

}  // namespace podsim::workload
