#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <stdexcept>

#include "podsim/calibration/device_profile.hpp"
#include "podsim/calibration/fabric_profile.hpp"
#include "podsim/core/config_node.hpp"

namespace podsim::calibration {

std::vector<Provenance> read_provenance(const ConfigNode& node) {
  std::vector<Provenance> out;
  for (const ConfigNode& entry : node.list("provenance")) {
    Provenance p;
    p.kind = entry.choice("kind", {"measured", "published", "derived", "prior"});
    p.source = entry.string("source");
    p.note = entry.string_or("note", "");
    entry.reject_unknown_keys();
    out.push_back(std::move(p));
  }
  if (out.empty()) node.fail("provenance", "every profile must say where its numbers came from");
  return out;
}

namespace {

// One release of the fused attention kernel (device_profile.hpp); a key it does not give keeps the value of
// `base` (the newest release, for an older one; the defaults for the newest).
FusedAttentionParams read_attention(const ConfigNode& att, const FusedAttentionParams& base) {
  FusedAttentionParams a = base;
  a.available = true;
  bool newest = !base.available;  // an older release starts from the newest one's numbers
  a.kernel = newest ? att.string("kernel") : att.string_or("kernel", base.kernel);
  a.library = att.string_or("library", base.library);
  auto fraction = [&att](const char* key, double fallback, bool required) {
    if (!required && !att.has(key)) return fallback;
    double f = att.positive(key);
    if (f > 1) att.fail(key, "an efficiency is a fraction of the tensor peak, in (0, 1]");
    return f;
  };
  a.forward_efficiency = fraction("forward_efficiency", base.forward_efficiency, newest);
  a.backward_efficiency = fraction("backward_efficiency", base.backward_efficiency, newest);
  a.causal_efficiency = fraction("causal_efficiency", base.causal_efficiency, false);
  if (att.has("block_overhead")) {
    ConfigNode b = att.child("block_overhead");
    a.forward_block_overhead = b.non_negative_or("forward", base.forward_block_overhead);
    a.backward_block_overhead = b.non_negative_or("backward", base.backward_block_overhead);
    b.reject_unknown_keys();
  }
  if (att.has("head_dim_efficiency")) {
    ConfigNode h = att.child("head_dim_efficiency");
    auto table = [&h](const char* pass, const std::map<double, double>& fallback) {
      std::map<double, double> t;
      if (!h.has(pass)) return fallback;
      ConfigNode widths = h.child(pass);
      for (const auto& key : widths.keys()) {
        double width = 0;
        try {
          width = std::stod(key);
        } catch (const std::exception&) {
        }
        if (!(width > 0))
          widths.fail(key,
                      "a head width (a positive number of elements per head, e.g. 128) maps to a "
                      "relative efficiency");
        t[width] = widths.positive(key);
        if (t[width] > 2) widths.fail(key, "a relative efficiency is between 0 and 2");
      }
      return t;
    };
    a.forward_head_dim_efficiency = table("forward", base.forward_head_dim_efficiency);
    a.backward_head_dim_efficiency = table("backward", base.backward_head_dim_efficiency);
    h.reject_unknown_keys();
  }
  return a;
}

}  // namespace

DeviceProfile load_device_profile(const std::string& path) {
  ConfigNode root = ConfigNode::load_file(path);
  DeviceProfile p;
  p.file = path;
  p.device = root.string("device");
  ConfigNode gemm = root.child("gemm");
  p.gemm.mainloop_efficiency = gemm.fraction_or("mainloop_efficiency", p.gemm.mainloop_efficiency);
  p.gemm.required_tile_intensity = gemm.positive_or("required_tile_intensity_flop_per_byte", 40);
  p.gemm.wave_overhead_s = gemm.non_negative_or("wave_overhead_us", 1.5) * 1e-6;
  p.gemm.max_split_k = static_cast<int>(gemm.positive_integer_or("max_split_k", 4));
  for (const ConfigNode& t : gemm.list("tiles")) {
    auto dims = t.elements();
    if (dims.size() != 2) t.fail({}, "a tile is [rows, columns], e.g. [256, 128]");
    GemmTile tile{static_cast<int>(dims[0].as_number()), static_cast<int>(dims[1].as_number())};
    if (tile.m <= 0 || tile.n <= 0) t.fail({}, "tile sizes must be positive");
    p.gemm.tiles.push_back(tile);
  }
  if (gemm.has("format_efficiency")) {
    ConfigNode formats = gemm.child("format_efficiency");
    for (const auto& key : formats.keys()) p.gemm.format_efficiency[key] = formats.fraction_or(key, 1.0);
  }
  if (gemm.has("split_accumulator_efficiency")) {
    ConfigNode formats = gemm.child("split_accumulator_efficiency");
    for (const auto& key : formats.keys())
      p.gemm.split_accumulator_efficiency[key] = formats.fraction_or(key, 1.0);
  }
  gemm.reject_unknown_keys();
  if (root.has("attention")) {
    ConfigNode att = root.child("attention");
    p.attention = read_attention(att, FusedAttentionParams{});
    if (auto releases = att.optional_child("releases"))
      for (const auto& name : releases->keys()) {
        if (name == "latest" || name == p.attention.library)
          releases->fail(name, fmt::format("'{}' names the newest release, which the attention section "
                                           "itself describes; an older release needs its own name",
                                           name));
        ConfigNode release = releases->child(name);
        p.attention_releases[name] = read_attention(release, p.attention);
        p.attention_releases[name].library = name;
        release.reject_unknown_keys();
      }
    att.reject_unknown_keys();
  }
  ConfigNode memory = root.child("memory");
  p.memory_efficiency = memory.fraction_or("bandwidth_efficiency", p.memory_efficiency);
  memory.reject_unknown_keys();
  p.kernel_overhead_s = root.non_negative_or("kernel_overhead_us", 4) * 1e-6;
  p.clock_sustain_factor = root.fraction_or("clock_sustain_factor", 1.0);
  p.framework_memory_bytes = root.non_negative_or("framework_memory_GiB", 0) * 1073741824.0;
  p.overlap_compute_slowdown = root.number_or("overlap_compute_slowdown", 1.0);
  if (p.overlap_compute_slowdown < 1 || p.overlap_compute_slowdown > 4)
    root.fail("overlap_compute_slowdown",
              fmt::format("must be between 1 (no slowdown) and 4, got {}", p.overlap_compute_slowdown));
  p.provenance = read_provenance(root);
  root.reject_unknown_keys();
  return p;
}

std::vector<std::string> attention_library_names(const DeviceProfile& profile) {
  std::vector<std::string> names = {"latest"};
  if (!profile.attention.library.empty()) names.push_back(profile.attention.library);
  for (const auto& [name, release] : profile.attention_releases) names.push_back(name);
  return names;
}

DeviceProfile with_attention_library(const DeviceProfile& profile, const std::string& library) {
  if (library.empty() || library == "latest" || library == profile.attention.library) return profile;
  auto it = profile.attention_releases.find(library);
  if (it == profile.attention_releases.end()) {
    throw std::invalid_argument(
        fmt::format("attention library '{}' is not in the {} profile ({}); it lists: {}", library,
                    profile.device, profile.file, fmt::join(attention_library_names(profile), ", ")));
  }
  DeviceProfile p = profile;
  p.attention = it->second;
  return p;
}

double FusedAttentionParams::head_dim_scale(bool forward, double head_dim) const {
  const auto& t = forward ? forward_head_dim_efficiency : backward_head_dim_efficiency;
  if (t.empty() || head_dim <= 0) return 1.0;
  auto hi = t.lower_bound(head_dim);
  if (hi == t.begin()) return hi->second;
  if (hi == t.end()) return std::prev(hi)->second;
  auto lo = std::prev(hi);
  double x = std::log2(head_dim), x0 = std::log2(lo->first), x1 = std::log2(hi->first);
  return lo->second + (hi->second - lo->second) * (x - x0) / (x1 - x0);
}

double FabricProfile::efficiency(const std::string& link_class) const {
  auto it = link_efficiency.find(link_class);
  return it == link_efficiency.end() ? 1.0 : it->second;
}

double FabricProfile::dispatch_efficiency(const std::string& link_class) const {
  auto it = expert_dispatch_efficiency.find(link_class);
  return it == expert_dispatch_efficiency.end() ? efficiency(link_class) : it->second;
}

double FabricProfile::step(const std::string& link_class) const {
  auto it = step_latency.find(link_class);
  return it == step_latency.end() ? 0.0 : it->second;
}

const ProtocolCost* FabricProfile::protocol(const std::string& algorithm, const std::string& name) const {
  auto a = protocols.find(algorithm);
  if (a == protocols.end()) return nullptr;
  auto p = a->second.find(name);
  return p == a->second.end() ? nullptr : &p->second;
}

namespace {

bool is_one_of(const std::string& name, const std::vector<std::string>& valid) {
  return std::find(valid.begin(), valid.end(), name) != valid.end();
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// `protocols: {ring: {ll: {base_us, intra_step_us, inter_step_us, bandwidth_factor}, ...}, tree: ...}`
std::map<std::string, std::map<std::string, ProtocolCost>> read_protocols(const ConfigNode& root) {
  std::map<std::string, std::map<std::string, ProtocolCost>> out;
  ConfigNode section = root.child("protocols");
  for (const auto& algorithm : section.keys()) {
    if (!is_one_of(algorithm, protocol_algorithm_names()))
      section.fail(algorithm,
                   "not an algorithm with protocols; valid: " + joined(protocol_algorithm_names()));
    ConfigNode per_algorithm = section.child(algorithm);
    for (const auto& name : per_algorithm.keys()) {
      if (!is_one_of(name, protocol_names()))
        per_algorithm.fail(name, "not a protocol; valid: " + joined(protocol_names()));
      ConfigNode entry = per_algorithm.child(name);
      ProtocolCost cost;
      cost.base = entry.non_negative_or("base_us", 0) * 1e-6;
      cost.intra_step = entry.non_negative_or("intra_step_us", 0) * 1e-6;
      cost.inter_step = entry.non_negative_or("inter_step_us", 0) * 1e-6;
      cost.bandwidth_factor = entry.fraction_or("bandwidth_factor", 1.0);
      entry.reject_unknown_keys();
      out[algorithm][name] = cost;
    }
    if (!out[algorithm].count("simple"))
      per_algorithm.fail("simple", "every algorithm with protocols needs `simple` (what large messages use)");
  }
  return out;
}

std::vector<MeasuredCollective> read_measured_collectives(const ConfigNode& root) {
  std::vector<MeasuredCollective> out;
  for (const ConfigNode& entry : root.list("collectives")) {
    MeasuredCollective c;
    c.op = entry.choice(
        "op", {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv", "broadcast"});
    c.ranks = static_cast<int>(entry.positive_integer("ranks"));
    c.nodes = static_cast<int>(entry.positive_integer("nodes"));
    c.bound_by = entry.string("bound_by");
    c.source = entry.string_or("source", "");
    for (const ConfigNode& r : entry.list("ranges")) {
      MeasuredRange range;
      range.from_bytes = r.positive("from_bytes");
      range.to_bytes = r.positive("to_bytes");
      if (range.to_bytes < range.from_bytes) r.fail("to_bytes", "must not be less than from_bytes");
      range.latency = r.non_negative_or("latency_us", 0) * 1e-6;
      range.busbw = r.non_negative_or("busbw_GBps", 0) * 1e9;
      range.peak_busbw = r.non_negative_or("peak_busbw_GBps", 0) * 1e9;
      range.bound_by = r.string("bound_by");
      range.model_error = r.non_negative_or("model_error_pct", 0) / 100;
      r.reject_unknown_keys();
      c.ranges.push_back(range);
    }
    entry.reject_unknown_keys();
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

FabricProfile load_fabric_profile(const std::string& path) {
  ConfigNode root = ConfigNode::load_file(path);
  FabricProfile p;
  p.file = path;
  p.name = root.string("name");
  ConfigNode eff = root.child("link_efficiency");
  for (const auto& key : eff.keys()) p.link_efficiency[key] = eff.fraction_or(key, 1.0);
  ConfigNode steps = root.child("step_latency_us");
  for (const auto& key : steps.keys()) p.step_latency[key] = steps.non_negative_or(key, 0) * 1e-6;
  p.launch_latency = root.non_negative_or("launch_latency_us", 5) * 1e-6;
  p.provenance = read_provenance(root);
  if (root.has("collectives")) p.measured = read_measured_collectives(root);
  if (root.has("protocols")) p.protocols = read_protocols(root);
  if (root.has("expert_dispatch")) {
    ConfigNode dispatch = root.child("expert_dispatch");
    for (const auto& key : dispatch.keys())
      p.expert_dispatch_efficiency[key] = dispatch.fraction_or(key, 1.0);
  }
  root.reject_unknown_keys();
  return p;
}

}  // namespace podsim::calibration
