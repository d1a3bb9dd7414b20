#include "podsim/workload/moe/gshard_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "podsim/core/config_choice.hpp"
#include "podsim/core/config_node.hpp"
#include "podsim/core/error.hpp"
#include "podsim/workload/bounded_reads.hpp"

namespace podsim::workload {
namespace {

std::string join(const std::vector<long long>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}

// Expert counts that shard evenly over `devices`: divisors of it and its first multiples.
std::string valid_experts(int devices) {
  std::vector<long long> ok;
  for (long long d = 1; d <= devices; ++d)
    if (devices % d == 0) ok.push_back(d);
  if (ok.size() > 12) ok.erase(ok.begin() + 6, ok.end() - 6);  // the smallest and largest divisors
  for (long long m = 2; m <= 4; m *= 2) ok.push_back(m * devices);
  return join(ok) + ", ... (a divisor or a multiple of " + std::to_string(devices) + ")";
}

}  // namespace

constexpr double kMaxCapacityFactor = 1000;

double GShardConfig::expert_capacity() const {
  // An expert never receives more than every token of the group (top_k picks distinct experts).
  double group = static_cast<double>(group_tokens());
  return std::clamp(std::ceil(capacity_factor * top_k * group / experts), 1.0, group);
}

GShardConfig read_gshard_workload(const ConfigNode& root, int topology_devices) {
  GShardConfig w;
  w.name = read_document_name(root);

  ConfigNode model = root.child("model");
  w.layers = model.positive_integer("layers");
  w.hidden = model.positive_integer("hidden");
  w.ffn_hidden = model.positive_integer("ffn_hidden");
  w.heads = model.positive_integer("heads");
  w.seq_len = model.positive_integer("seq_len");
  w.vocab = model.positive_integer("vocab");
  w.experts = model.positive_integer("experts");
  w.top_k = int_in_or(model, "top_k", 1, 1 << 20, 2);
  w.capacity_factor = model.number_or("capacity_factor", 1.0);
  // Above experts / top_k the capacity is already the whole group (expert_capacity clamps it there);
  // the upper bound only keeps absurd values (1e300) from reaching the arithmetic.
  if (!(w.capacity_factor > 0) || !(w.capacity_factor <= kMaxCapacityFactor))
    model.fail(
        "capacity_factor",
        fmt::format("must be more than 0 and at most {:g}, got {} (expert capacity = capacity_factor x "
                    "top_k x group tokens / experts; GShard uses 1.0, Switch Transformer 1.0-2.0)",
                    kMaxCapacityFactor, w.capacity_factor));
  w.moe_every = int_in_or(model, "moe_every", 1, 1 << 20, 2);
  w.group_size = model.positive_integer_or_auto("group_size", 0);
  model.reject_unknown_keys();

  ConfigNode par = root.child("parallel");
  w.devices = int_in_or_auto(par, "devices", 1, 1 << 30, 0);
  par.reject_unknown_keys();

  ConfigNode train = root.child("training");
  w.batch_tokens = train.positive_integer("batch_tokens");
  try {
    w.precision = choice_or(train, "precision", topology::kPrecisionNames,
                            {topology::Precision::fp32, topology::Precision::bf16, topology::Precision::fp16},
                            topology::Precision::bf16);
  } catch (const std::invalid_argument& e) {
    train.fail("precision", e.what());
  }
  std::string activations = train.choice_or("activation_precision", {"same", "fp32", "bf16"}, "same");
  w.activation_bytes =
      activations == "same" ? topology::bytes_per_element(w.precision) : (activations == "fp32" ? 4 : 2);
  w.rematerialization = train.boolean_or("rematerialization", true);
  w.adafactor = train.choice_or("optimizer", {"adafactor", "adam"}, "adafactor") == "adafactor";
  w.weight_bytes = train.choice_or("weight_precision", {"fp32", "bf16"}, "fp32") == "fp32" ? 4 : 2;
  w.grad_reduce_bytes = train.choice_or("grad_reduce_precision", {"fp32", "bf16"}, "fp32") == "fp32" ? 4 : 2;
  train.reject_unknown_keys();

  // Divisibility and ranges, each naming the field and what would be valid.
  if (w.devices == 0) w.devices = topology_devices;
  if (w.devices > topology_devices)
    par.fail("devices",
             fmt::format("{} devices requested but the topology has {}", w.devices, topology_devices));
  if (w.layers % 2)
    model.fail("layers", fmt::format("layers={} counts encoder + decoder layers (GShard's '36L' is 18 + 18); "
                                     "it must be even",
                                     w.layers));
  if (w.moe_every > w.layers_per_stack())
    model.fail("moe_every", fmt::format("an MoE layer every {} layers leaves none in stacks of {} layers",
                                        w.moe_every, w.layers_per_stack()));
  if (w.hidden % w.heads)
    model.fail("hidden", fmt::format("hidden {} is not divisible by heads {}", w.hidden, w.heads));
  if (w.top_k > w.experts)
    model.fail("top_k", fmt::format("top_k={} experts per token but only {} experts", w.top_k, w.experts));
  if (w.experts % w.devices && w.devices % w.experts)
    model.fail(
        "experts",
        fmt::format("{} experts cannot be sharded over {} devices: each device holds one or more whole "
                    "experts (experts a multiple of devices) or each expert is replicated over "
                    "devices/experts devices (experts divide devices); valid: {}",
                    w.experts, w.devices, valid_experts(w.devices)));
  if (w.batch_tokens % w.devices)
    train.fail("batch_tokens", fmt::format("{} tokens per step cannot be split evenly over {} devices",
                                           w.batch_tokens, w.devices));
  if (w.tokens_per_device() % w.seq_len)
    train.fail("batch_tokens", fmt::format("{} tokens per device is not a whole number of {}-token sequences",
                                           w.tokens_per_device(), w.seq_len));
  if (w.group_size > 0 && w.tokens_per_device() % w.group_size)
    model.fail("group_size", fmt::format("a device's {} tokens are not a whole number of groups of {}",
                                         w.tokens_per_device(), w.group_size));
  return w;
}

}  // namespace podsim::workload
