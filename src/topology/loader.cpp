#include "podsim/topology/loader.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <map>

#include "podsim/core/config_node.hpp"
#include "podsim/core/error.hpp"
#include "podsim/topology/families.hpp"

namespace podsim::topology {
namespace {

std::map<std::string, FamilyBuilder>& registry() {
  static std::map<std::string, FamilyBuilder> families = {
      {"gpu_cluster", &build_gpu_cluster},
      {"wafer_cluster", &build_wafer_cluster},
      {"torus", &build_torus},
      {"cpu_cluster", &build_cpu_cluster},
  };
  return families;
}

}  // namespace

void register_family(const std::string& kind, FamilyBuilder builder) {
  registry()[kind] = builder;
}

std::string resolve_path(const std::string& base_dir, const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_absolute()) return p.string();
  return (std::filesystem::path(base_dir) / p).lexically_normal().string();
}

namespace {

Topology build_topology(ConfigNode root, const std::string& name, const std::string& base_dir,
                        const Overrides& overrides) {
  for (const auto& [key, value] : overrides)
    root.apply_override(key, value, fmt::format("--set topology.{}={}", key, value));
  std::vector<std::string> kinds;
  for (const auto& [k, _] : registry()) kinds.push_back(k);
  std::string kind = root.choice("kind", kinds);
  Topology topo = registry()[kind](root, base_dir);
  topo.kind = kind;
  topo.source_file = name;
  topo.device_speed = read_device_speed(root, topo.compute_device_count(), topo.devices_per_node);
  for (const auto& e : topo.device_speed.entries) topo.facts.emplace_back("slower devices", e);
  root.reject_unknown_keys();
  return topo;
}

}  // namespace

Topology load_topology(const std::string& path, const Overrides& overrides) {
  std::string base_dir = std::filesystem::path(path).parent_path().string();
  return build_topology(ConfigNode::load_file(path), path, base_dir.empty() ? "." : base_dir, overrides);
}

Topology load_topology_text(const std::string& text, const std::string& name, const std::string& base_dir,
                            const Overrides& overrides) {
  return build_topology(ConfigNode::load_string(text, name), name, base_dir, overrides);
}

std::map<Precision, double> read_peak_flops(const ConfigNode& device) {
  std::map<Precision, double> peak_flops;
  ConfigNode peaks = device.child("peak_tflops");
  for (const auto& key : peaks.keys()) {
    Precision p;
    try {
      p = parse_precision(key);
    } catch (const std::invalid_argument& e) {
      peaks.fail(key, e.what());
    }
    peak_flops[p] = peaks.positive(key) * 1e12;
  }
  peaks.reject_unknown_keys();
  return peak_flops;
}

namespace {

// The file a profile key names, relative to the topology file: an empty name or a directory would
// otherwise surface later as an error that names neither this file nor the key.
std::string read_profile_file(const ConfigNode& node, const std::string& key, const std::string& what,
                              const std::string& base_dir) {
  std::string name = node.string(key);
  if (name.empty())
    node.fail(key, fmt::format("the {} file name is empty; give a path relative to this file, e.g. "
                               "../calibration/profiles/NAME.yaml",
                               what));
  std::string path = resolve_path(base_dir, name);
  std::error_code ec;
  auto type = std::filesystem::status(path, ec).type();
  if (type == std::filesystem::file_type::not_found)
    node.fail(key, fmt::format("{} {} does not exist", what, path));
  if (type == std::filesystem::file_type::directory)
    node.fail(key, fmt::format("{} {} is a directory, not a profile file", what, path));
  return path;
}

}  // namespace

std::string read_profile_path(const ConfigNode& device, const std::string& base_dir) {
  return read_profile_file(device, "profile", "calibration profile", base_dir);
}

long long read_server_count(const ConfigNode& root) {
  long long nodes = root.positive_integer("nodes");
  if (nodes > 100000)
    root.fail("nodes", fmt::format("{} servers is beyond what podsim simulates (at most 100000)", nodes));
  return nodes;
}

DeviceSpec read_device_spec(const ConfigNode& device, const std::string& base_dir) {
  DeviceSpec spec;
  spec.name = device.string("name");
  spec.peak_flops = read_peak_flops(device);
  spec.hbm_bytes = device.positive("hbm_GiB") * 1073741824.0;
  spec.hbm_bandwidth = device.positive("hbm_bandwidth_GBps") * 1e9;
  spec.sm_count = static_cast<int>(device.positive_integer("sm_count"));
  spec.profile_path = read_profile_path(device, base_dir);
  device.reject_unknown_keys();
  return spec;
}

void apply_fabric_profile(Topology& topo, const ConfigNode& root, const std::string& base_dir) {
  std::string path = read_profile_file(root, "fabric_profile", "fabric calibration profile", base_dir);
  topo.fabric_profile = calibration::load_fabric_profile(path);
  topo.fabric_profile_path = path;
  auto check_classes = [&](const std::map<std::string, double>& by_class, const char* section) {
    for (const auto& [cls, _] : by_class) {
      try {
        parse_link_class(cls);
      } catch (const std::invalid_argument& e) {
        throw InputError(fmt::format("{}: {}: {}", path, section, e.what()));
      }
    }
  };
  check_classes(topo.fabric_profile.link_efficiency, "link_efficiency");
  check_classes(topo.fabric_profile.expert_dispatch_efficiency, "expert_dispatch");
  for (auto& link : topo.links) link.efficiency = topo.fabric_profile.efficiency(to_string(link.cls));
}

}  // namespace podsim::topology
