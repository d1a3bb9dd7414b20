#include "podsim/topology/host_spec.hpp"

#include <fmt/format.h>

#include "podsim/core/config_node.hpp"
#include "podsim/core/units.hpp"

namespace podsim::topology {

HostSpec read_host_spec(const ConfigNode& node) {
  HostSpec h;
  if (node.has("host_memory_GiB") || node.has("host_memory_bandwidth_GBps")) {
    h.memory_bytes = node.positive("host_memory_GiB") * GiB;
    h.memory_bandwidth = node.positive("host_memory_bandwidth_GBps") * 1e9;
  }
  bool any_ssd = false;
  for (const char* key : {"ssd_TB", "ssd_bandwidth_GBps", "ssd_write_bandwidth_GBps", "ssd_iops"})
    any_ssd = any_ssd || node.has(key);
  if (any_ssd) {
    h.ssd_bytes = node.positive("ssd_TB") * 1e12;
    h.ssd_read_bandwidth = node.positive("ssd_bandwidth_GBps") * 1e9;
    h.ssd_write_bandwidth = node.positive_or("ssd_write_bandwidth_GBps", h.ssd_read_bandwidth / 1e9) * 1e9;
    h.ssd_read_iops = node.positive("ssd_iops");
  }
  return h;
}

std::string describe_host(const HostSpec& host) {
  std::string out;
  if (host.has_memory())
    out = fmt::format("{:.0f} GiB DRAM at {:.0f} GB/s", host.memory_bytes / 1073741824.0,
                      host.memory_bandwidth / 1e9);
  if (host.has_ssd())
    out += fmt::format("{}{:.3g} TB SSD, {:.3g} / {:.3g} GB/s read / write, {:.3g}M read IOPS",
                       out.empty() ? "" : "; ", host.ssd_bytes / 1e12, host.ssd_read_bandwidth / 1e9,
                       host.ssd_write_bandwidth / 1e9, host.ssd_read_iops / 1e6);
  return out.empty() ? "not described" : out;
}

}  // namespace podsim::topology
