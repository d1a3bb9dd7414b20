#include "podsim/topology/describe.hpp"

#include <fmt/format.h>

#include <map>

#include "podsim/topology/graph.hpp"

namespace podsim::topology {

std::string describe(const Topology& topo) {
  std::string out;
  out += fmt::format("{} ({}, {})\n", topo.name, topo.kind, topo.source_file);
  for (const auto& [k, v] : topo.facts) out += fmt::format("  {:<18}{}\n", k, v);
  const auto& d = topo.device;
  std::string peaks;
  for (const auto& [p, f] : d.peak_flops)
    peaks += fmt::format("{}{} {:.4g}", peaks.empty() ? "" : ", ", to_string(p), f / 1e12);
  // Generic words: the same fields are HBM and SMs on a GPU, SRAM and cores on a wafer, HBM and MXU cores on
  // a TPU.
  out += fmt::format(
      "  {:<18}{} x {}: {} TFLOP/s peak, {:.0f} GiB device memory at {:.0f} GB/s, {} compute units\n",
      "devices", topo.compute_device_count(), d.name, peaks, d.hbm_bytes / 1073741824.0,
      d.hbm_bandwidth / 1e9, d.sm_count);

  out += "  links (full duplex, per direction):\n";
  std::map<std::pair<std::string, double>, int> classes;
  for (const auto& l : topo.links) classes[{to_string(l.cls), l.bandwidth}]++;
  for (const auto& [key, count] : classes)
    out += fmt::format("    {:>7} x {:<11} {:>9.1f} GB/s nominal, {:>9.1f} GB/s achieved\n", count, key.first,
                       key.second / 1e9, key.second * topo.fabric_profile.efficiency(key.first) / 1e9);
  out += "  switches and NICs:\n";
  for (const auto& [role, count] : topo.role_counts())
    if (role != "gpu" && role != "device" && role != "chip")
      out += fmt::format("    {:>7} x {}\n", count, role);
  out += fmt::format("  {:<18}{}\n", "routing", topo.router().describe());
  int components = connected_components(topo);
  auto problems = check_routes(topo, 32);
  out += fmt::format("  {:<18}{}\n", "checks",
                     components == 1 && problems.empty()
                         ? std::string("connected; sampled routes are contiguous shortest paths")
                         : fmt::format("{} component(s); {}", components,
                                       problems.empty() ? "routes ok" : problems.front()));
  out += fmt::format("  {:<18}{} hops between devices\n", "diameter", device_diameter(topo));
  Bisection b = bisection_bandwidth(topo);
  out += fmt::format("  {:<18}{:.2f} TB/s per direction ({}), {:.1f} GB/s per device\n", "bisection",
                     b.bandwidth / 1e12, b.cut,
                     b.bandwidth / std::max(1, topo.compute_device_count() / 2) / 1e9);
  out +=
      fmt::format("  {:<18}{} ({})\n", "compute profile", topo.device_profile.file,
                  topo.device_profile.provenance.empty() ? "?" : topo.device_profile.provenance.front().kind);
  out +=
      fmt::format("  {:<18}{} ({})\n", "fabric profile", topo.fabric_profile.file,
                  topo.fabric_profile.provenance.empty() ? "?" : topo.fabric_profile.provenance.front().kind);
  return out;
}

}  // namespace podsim::topology
