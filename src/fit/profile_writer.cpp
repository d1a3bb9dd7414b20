#include "podsim/fit/profile_writer.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

namespace podsim::calibration {
namespace {

std::string header(const std::vector<std::string>& comments) {
  std::string out;
  for (const auto& c : comments) out += "# " + c + "\n";
  return out;
}

std::string provenance_yaml(const std::vector<Provenance>& list) {
  std::string out = "provenance:\n";
  for (const auto& p : list) {
    out += fmt::format("  - kind: {}\n    source: {}\n", p.kind, yaml_quote(p.source));
    if (!p.note.empty()) out += fmt::format("    note: {}\n", yaml_quote(p.note));
  }
  return out;
}

// Shortest text that reads back as the same value to the precision a profile needs.
std::string num(double v) {
  return fmt::format("{:.4g}", v);
}

}  // namespace

std::string yaml_quote(const std::string& text) {
  YAML::Emitter e;
  e << YAML::DoubleQuoted << text;
  return e.c_str();
}

std::string device_profile_yaml(const DeviceProfile& p, const std::vector<std::string>& comments) {
  std::string out = header(comments);
  out += fmt::format("device: {}\n", yaml_quote(p.device));
  out += "gemm:\n";
  out += fmt::format("  mainloop_efficiency: {}\n", num(p.gemm.mainloop_efficiency));
  out += fmt::format("  required_tile_intensity_flop_per_byte: {}\n", num(p.gemm.required_tile_intensity));
  out += fmt::format("  wave_overhead_us: {}\n", num(p.gemm.wave_overhead_s * 1e6));
  out += fmt::format("  max_split_k: {}\n", p.gemm.max_split_k);
  std::string tiles;
  for (const auto& t : p.gemm.tiles) tiles += fmt::format("{}[{}, {}]", tiles.empty() ? "" : ", ", t.m, t.n);
  out += fmt::format("  tiles: [{}]\n", tiles);
  out += fmt::format("memory:\n  bandwidth_efficiency: {}\n", num(p.memory_efficiency));
  out += fmt::format("kernel_overhead_us: {}\n", num(p.kernel_overhead_s * 1e6));
  out += fmt::format("clock_sustain_factor: {}\n", num(p.clock_sustain_factor));
  out += fmt::format("framework_memory_GiB: {}\n", num(p.framework_memory_bytes / 1073741824.0));
  out += fmt::format("overlap_compute_slowdown: {}\n", num(p.overlap_compute_slowdown));
  return out + provenance_yaml(p.provenance);
}

std::string fabric_profile_yaml(const FabricProfile& p, const std::vector<std::string>& comments) {
  std::string out = header(comments);
  out += fmt::format("name: {}\n", yaml_quote(p.name));
  out += "link_efficiency:\n";
  for (const auto& [cls, v] : p.link_efficiency) out += fmt::format("  {}: {}\n", cls, num(v));
  out += "step_latency_us:\n";
  for (const auto& [cls, v] : p.step_latency) out += fmt::format("  {}: {}\n", cls, num(v * 1e6));
  out += fmt::format("launch_latency_us: {}\n", num(p.launch_latency * 1e6));
  out += provenance_yaml(p.provenance);
  if (p.measured.empty()) return out;
  out +=
      "# What was measured, per collective and size range: fitted latency (time at zero size) and bus\n"
      "# bandwidth within the range, the largest busbw seen, what bounds the range, and the mean |error| of\n"
      "# podsim's collective model with the parameters above. podsim simulates with the parameters above;\n"
      "# this section is the record they were fitted to.\n";
  out += "collectives:\n";
  for (const auto& c : p.measured) {
    out += fmt::format(
        "  - op: {}\n    ranks: {}\n    nodes: {}\n    bound_by: {}\n    source: {}\n    ranges:\n", c.op,
        c.ranks, c.nodes, c.bound_by, yaml_quote(c.source));
    for (const auto& r : c.ranges)
      out += fmt::format(
          "      - {{from_bytes: {:.0f}, to_bytes: {:.0f}, latency_us: {}, busbw_GBps: {}, peak_busbw_GBps: "
          "{}, "
          "bound_by: {}, model_error_pct: {:.1f}}}\n",
          r.from_bytes, r.to_bytes, num(r.latency * 1e6), num(r.busbw / 1e9), num(r.peak_busbw / 1e9),
          r.bound_by, r.model_error * 100);
  }
  return out;
}

}  // namespace podsim::calibration
