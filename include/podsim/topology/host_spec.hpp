// Reading and describing the host side of a server (DRAM, local SSD): optional keys of a topology's
// `node:` section that parameter-server workloads need.
#pragma once

#include <string>

#include "podsim/topology/topology.hpp"

namespace podsim {
class ConfigNode;
}

namespace podsim::topology {

// Reads the optional keys host_memory_GiB, host_memory_bandwidth_GBps, ssd_TB, ssd_bandwidth_GBps,
// ssd_write_bandwidth_GBps (default: ssd_bandwidth_GBps) and ssd_iops from a `node:` mapping. Keys of one
// part come together: a DRAM needs both of its keys, an SSD its capacity, bandwidth and IOPS.
HostSpec read_host_spec(const ConfigNode& node);

// "1024 GiB DRAM at 200 GB/s; 16 TB SSD, 25.6 / 8.4 GB/s read / write, 3.92M read IOPS" for `topo describe`.
std::string describe_host(const HostSpec& host);

}  // namespace podsim::topology
