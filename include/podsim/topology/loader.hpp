// YAML topology file -> Topology. The file's `kind` selects the family builder (gpu_cluster, torus, ...);
// overrides are `--set topology.KEY=VALUE` with the `topology.` prefix removed.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "podsim/core/config_node.hpp"
#include "podsim/topology/topology.hpp"

namespace podsim {
class ConfigNode;
}

namespace podsim::topology {

using podsim::Overrides;  // (dotted path, value), defined in core/config_node.hpp

Topology load_topology(const std::string& path, const Overrides& overrides = {});
// The same from YAML text; relative files in it (profiles) are resolved against `base_dir`.
Topology load_topology_text(const std::string& text, const std::string& name, const std::string& base_dir,
                            const Overrides& overrides = {});

// Family builders register themselves here; each reads its own keys from the document root.
using FamilyBuilder = Topology (*)(const ConfigNode& root, const std::string& base_dir);
void register_family(const std::string& kind, FamilyBuilder builder);

// Shared readers for sections every family has.
DeviceSpec read_device_spec(const ConfigNode& device, const std::string& base_dir);
// Pieces of a device section for families whose device is not a GPU (cpu_cluster): peak_tflops (a mapping
// precision -> dense TFLOP/s; returns flop/s) and profile (the calibration profile, resolved against
// base_dir; it must exist).
std::map<Precision, double> read_peak_flops(const ConfigNode& device);
std::string read_profile_path(const ConfigNode& device, const std::string& base_dir);
// `nodes` of a cluster of servers (gpu_cluster, cpu_cluster): at most 100000.
long long read_server_count(const ConfigNode& root);
// Applies the fabric profile's per-class efficiencies to the links; errors name unknown classes.
void apply_fabric_profile(Topology& topo, const ConfigNode& root, const std::string& base_dir);
std::string resolve_path(const std::string& base_dir, const std::string& path);

}  // namespace podsim::topology
