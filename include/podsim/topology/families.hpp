// One builder per topology family. Each lives in its own file under src/topology/ and reads the keys of
// its YAML kind; loader.cpp maps `kind:` to these.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "podsim/topology/topology.hpp"

namespace podsim {
class ConfigNode;
}

namespace podsim::topology {

// Family data of gpu_cluster and cpu_cluster: their graph says nearly everything; workloads ask
// topo.family<GpuClusterData>() which server model applies (Topology::family).
struct GpuClusterData {
  // device rank -> vertex of its NVLink domain's NVSwitch: where in-switch reduction (NVLS) flows end.
  std::vector<int> nvswitch_of_device;
  int nvswitch_of(int device) const { return nvswitch_of_device.at(device); }
  // With `fabric.in_network_reduction: sharp` (InfiniBand SHARP): device rank -> the switches above it on
  // its rail's aggregation tree, lowest first (leaf, spine, core plane; -1 past the tiers the fabric has).
  // The router routes a device to its rail's leaf and a switch to the next one up. Empty: no SHARP.
  std::vector<std::array<int, 3>> reduction_uplinks;
  bool in_network_reduction() const { return !reduction_uplinks.empty(); }
  // Some tier of the fat tree the job spans has fewer uplinks than downlinks (fabric.oversubscription with
  // more than one SU, core_oversubscription with more than one spine group): where ranks sit then decides
  // which traffic shares the thinner links (the plan searches parallel.rank_order there).
  bool tapered = false;
};
struct CpuClusterData {};

// kind: gpu_cluster — servers of GPUs on an NVLink/NVSwitch scale-up fabric, one NIC per rail, joined by
// a rail-optimized fat tree (DGX SuperPOD and its predecessors).
Topology build_gpu_cluster(const ConfigNode& root, const std::string& base_dir);

// kind: wafer_cluster — Cerebras CS-2 systems, a MemoryX weight store and a SwarmX broadcast/reduce tree
// (wafer_cluster.hpp).
Topology build_wafer_cluster(const ConfigNode& root, const std::string& base_dir);
// kind: torus — TPU pods: chips (one or more cores each) on a 2D or 3D torus of ICI links (torus.hpp).
Topology build_torus(const ConfigNode& root, const std::string& base_dir);
// kind: cpu_cluster — CPU servers (an in-memory MPI cluster) on one Ethernet/InfiniBand switch or a
// two-level fat tree; each server is one device whose memory is its DRAM.
Topology build_cpu_cluster(const ConfigNode& root, const std::string& base_dir);

}  // namespace podsim::topology
