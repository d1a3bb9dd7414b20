// Devices that compute slower than their datasheet: stragglers, a node that throttles (issue 19).
// A topology file names them in `slowdown:` (a list of `{node: 17, factor: 0.9}` or `{device: 130,
// factor: 0.5}`) or draws them with `straggler: {fraction: 0.01, factor: 0.9, seed: 1}` (that fraction of
// the compute devices, drawn without replacement from a fixed seed). A factor is the device's speed
// relative to nominal, in (0, 1]: 0.9 = every kernel takes 1/0.9 as long. Entries on the same device
// multiply (a throttled node with one bad GPU in it).
#pragma once

#include <string>
#include <vector>

namespace podsim {
class ConfigNode;
}

namespace podsim::topology {

struct DeviceSpeed {
  std::vector<double> factor;        // per compute device rank; empty = every device at full speed
  std::vector<std::string> entries;  // each slowdown as a person reads it, for describe and the notes
  bool nominal() const { return factor.empty(); }
  double of(int device) const { return factor.empty() ? 1.0 : factor[static_cast<size_t>(device)]; }
  int slow_devices() const;
};

// Reads `slowdown:` and `straggler:` of a topology file's root (both optional).
DeviceSpeed read_device_speed(const ConfigNode& root, int compute_devices, int devices_per_node);

}  // namespace podsim::topology
