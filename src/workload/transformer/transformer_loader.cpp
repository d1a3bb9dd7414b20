#include "podsim/workload/transformer/transformer_loader.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "podsim/core/config_node.hpp"
#include "podsim/core/error.hpp"
#include "podsim/topology/resize_hint.hpp"
#include "podsim/workload/transformer/pipeline_split.hpp"

namespace podsim::workload {
namespace {

// training.attention_library: a release the device profile lists (InputError at the key otherwise).
void resolve_attention_library(const ConfigNode& train, TrainingConfig& t,
                               const calibration::DeviceProfile& profile) {
  auto names = calibration::attention_library_names(profile);
  if (std::find(names.begin(), names.end(), t.attention_library) != names.end()) return;
  train.fail("attention_library",
             fmt::format("'{}' is not a release of the fused attention library the {} profile ({}) "
                         "describes; valid: {}",
                         t.attention_library, profile.device, profile.file, fmt::join(names, ", ")));
}

}  // namespace

WorkloadConfig load_workload(const std::string& path, const Overrides& overrides,
                             const topology::Topology& topo) {
  ConfigNode root = ConfigNode::load_file(path);
  for (const auto& [key, value] : overrides)
    root.apply_override(key, value, fmt::format("--set workload.{}={}", key, value));
  root.choice("kind", {"transformer_lm"});
  WorkloadConfig w = read_transformer_on(root, path, topo);
  root.reject_unknown_keys();
  return w;
}

WorkloadConfig read_transformer_on(const ConfigNode& root, const std::string& file,
                                   const topology::Topology& topo) {
  WorkloadConfig w;
  try {
    w = read_transformer_workload(root, topo.compute_device_count(), topo.devices_per_node);
  } catch (const InputError& e) {  // "add nodes": TPU slices and wafer clusters are sized by other keys
    throw InputError(topology::with_resize_hint(e.what(), topo));
  }
  check_precision_on_device(root.child("training"), w.training.precision, topo.device, topo.source_file);
  resolve_attention(root.child("training"), w.training, topo.device, topo.device_profile.attention.available);
  resolve_fp8_layout(w.training, topo.device);
  resolve_attention_library(root.child("training"), w.training, topo.device_profile);
  if (w.moe.enabled()) check_dispatcher_sms_on_device(root, w.moe, topo.device);
  for (auto& warning : inconsistent_derived_keys(root.child("model"), w.model))
    w.warnings.push_back(std::move(warning));
  w.kind = "transformer_lm";
  w.file = file;
  return w;
}

std::vector<std::pair<int, int>> candidate_settings(const WorkloadConfig& w) {
  std::vector<int> micro_batches, virtual_stages;
  long long per_replica = w.training.global_batch / w.parallel.dp;
  if (w.training.micro_batch_auto) {
    for (int b = 1; b <= 64 && b <= per_replica; b *= 2)
      if (per_replica % b == 0) micro_batches.push_back(b);
  } else {
    micro_batches.push_back(w.training.micro_batch);
  }
  // Only the interleaved schedule has model chunks; the reader resolves `auto` to 1 for the others.
  if (w.parallel.virtual_stages_auto && w.parallel.schedule == Schedule::interleaved) {
    for (int v = 1; v <= 8; ++v)
      if (splits_evenly(w, v)) virtual_stages.push_back(v);
  } else {
    virtual_stages.push_back(w.parallel.virtual_stages_auto ? 1 : w.parallel.virtual_stages);
  }
  std::vector<std::pair<int, int>> out;
  for (int b : micro_batches)
    for (int v : virtual_stages) {
      long long microbatches = per_replica / b;
      if (v > 1 && !interleaved_microbatch_problem(w.parallel, microbatches).empty()) continue;
      out.emplace_back(b, v);
    }
  return out;
}

}  // namespace podsim::workload
