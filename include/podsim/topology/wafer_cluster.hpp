// kind: wafer_cluster — Cerebras CS-2 (or CS-1) systems, a MemoryX weight store and a SwarmX
// broadcast/reduce tree. What the workload layer needs beyond the generic graph: the wafer's 2D core mesh
// (for placing layers on it and costing kernels) and where MemoryX and SwarmX sit among the device ranks.
//
// Device ranks: 0..systems-1 are the wafers (compute devices); `memoryx` and `swarmx` are service
// endpoints (see Topology::compute_devices). They are endpoints, not plain switches, because both are
// active: SwarmX nodes replicate weights and add gradients, MemoryX stores weights and runs the optimizer.
// A broadcast is therefore one flow per tree edge (each node forwards what it receives to its children)
// and a reduction one flow per edge upwards, all progressing together: a pipelined, cut-through tree.
#pragma once

#include <vector>

#include "podsim/calibration/wafer_profile.hpp"
#include "podsim/topology/topology.hpp"

namespace podsim::topology {

struct WaferMesh {
  int columns = 0, rows = 0;  // usable core grid the compiler places kernels on
  long long cores = 0;        // cores on the wafer (datasheet; includes ones outside the usable grid)
  double link_bandwidth = 0;  // bytes/s per direction of one core-to-core link
  double hop_latency = 0;     // seconds per core-to-core hop
  double core_peak(double wafer_peak) const { return wafer_peak / static_cast<double>(cores); }
};

struct WaferClusterSpec {
  std::string system_name;  // "CS-2"
  int systems = 0;
  WaferMesh mesh;
  double sram_bytes = 0, sram_bandwidth = 0;  // per wafer
  double system_io_bandwidth = 0;             // bytes/s per direction between a system and SwarmX

  int memoryx = -1;                     // device rank of the MemoryX weight store
  double memoryx_capacity_bytes = 0;    // weights + optimizer state it can hold
  double memoryx_bandwidth = 0;         // bytes/s per direction between MemoryX and the SwarmX root
  double memoryx_update_bandwidth = 0;  // memory bandwidth its optimizer update runs at, bytes/s

  int fan_out = 0;                // children per SwarmX node
  std::vector<int> swarmx;        // device ranks of the SwarmX nodes, root first
  int swarmx_levels = 0;          // tree depth below MemoryX, not counting the systems
  double swarmx_hop_latency = 0;  // seconds per tree edge
  // Tree edges as (parent rank, child rank), parents before children: MemoryX -> root, node -> node,
  // leaf node -> system.
  std::vector<std::pair<int, int>> tree_edges;

  calibration::WaferProfile profile;
};

}  // namespace podsim::topology
