// kind: cpu_cluster — N CPU servers (an in-memory MPI cluster) on Ethernet or InfiniBand.
//
// Model:
// - Each server is one device: its CPU sockets together (peak FLOP/s per precision, cores standing for the
//   SMs of the compute model's wave quantization) and its DRAM (the device memory, `node.memory_GiB`),
//   calibrated by a CPU compute profile. The server's NIC is folded into its uplink.
// - `network.kind: star`: every server on one non-blocking switch. `fat_tree`: racks of `rack_nodes`
//   servers under a top-of-rack leaf; leaves join one logical spine through a trunk of
//   rack_nodes / oversubscription NIC links (perfectly balanced ECMP, as the gpu_cluster family models
//   its spine trunks). Routes go up to the lowest common switch and down.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "podsim/core/config_node.hpp"
#include "podsim/core/error.hpp"
#include "podsim/core/units.hpp"
#include "podsim/topology/families.hpp"
#include "podsim/topology/host_spec.hpp"
#include "podsim/topology/loader.hpp"

namespace podsim::topology {
namespace {

class CpuClusterRouter final : public Router {
 public:
  int rack_nodes = 0;
  std::vector<int> vertex_node;  // vertex -> server index or -1
  std::vector<int> uplink;       // server -> link (a = server, b = leaf)
  std::vector<int> trunk;        // rack -> link (a = leaf, b = spine); empty for a star

  void route(int src_vertex, int dst_vertex, Route& out) const override {
    int s = vertex_node[src_vertex], d = vertex_node[dst_vertex];
    out.push_back({uplink[s], true});
    if (!trunk.empty() && s / rack_nodes != d / rack_nodes) {
      out.push_back({trunk[s / rack_nodes], true});
      out.push_back({trunk[d / rack_nodes], false});
    }
    out.push_back({uplink[d], false});
  }

  std::string describe() const override {
    return trunk.empty() ? "one switch" : "up to the rack leaf, through the spine if racks differ";
  }
};

DeviceSpec read_cpu_spec(const ConfigNode& cpu, double memory_bytes, double memory_bandwidth,
                         const std::string& base_dir) {
  DeviceSpec spec;
  spec.name = cpu.string("name");
  spec.peak_flops = read_peak_flops(cpu);
  spec.sm_count = static_cast<int>(cpu.positive_integer("cores"));
  spec.hbm_bytes = memory_bytes;  // a CPU server's device memory is its DRAM
  spec.hbm_bandwidth = memory_bandwidth;
  spec.profile_path = read_profile_path(cpu, base_dir);
  cpu.reject_unknown_keys();
  return spec;
}

}  // namespace

Topology build_cpu_cluster(const ConfigNode& root, const std::string& base_dir) {
  Topology topo;
  topo.name = read_document_name(root);
  long long nodes = read_server_count(root);

  ConfigNode node = root.child("node");
  node.string_or("name", "");
  double memory = node.positive("memory_GiB") * GiB;
  double memory_bw = node.positive("memory_bandwidth_GBps") * 1e9;
  topo.device = read_cpu_spec(node.child("cpu"), memory, memory_bw, base_dir);
  topo.device_profile = calibration::load_device_profile(topo.device.profile_path);
  double nic_bw = node.positive("nic_bandwidth_Gbps") * 1e9 / 8;
  node.reject_unknown_keys();
  // The whole server is the device: its DRAM is both the device memory and the host memory.
  topo.host.memory_bytes = memory;
  topo.host.memory_bandwidth = memory_bw * topo.device_profile.memory_efficiency;

  ConfigNode net = root.child("network");
  std::string shape = net.choice("kind", {"star", "fat_tree"});
  LinkClass cls = parse_link_class(
      net.choice("link", kLinkClassNames.names({LinkClass::ethernet, LinkClass::infiniband})));
  double hop_lat = net.non_negative_or("hop_latency_us", 1.0) * 1e-6;
  // A star has no racks: rack_nodes and oversubscription are checked but do not apply to it.
  int rack = static_cast<int>(shape == "fat_tree" ? net.positive_integer("rack_nodes")
                                                  : net.positive_integer_or("rack_nodes", nodes));
  double oversub = net.positive_or("oversubscription", 1.0);
  if (oversub < 1) net.fail("oversubscription", "must be 1 (non-blocking) or more (e.g. 3 for 3:1)");
  if (shape == "star") rack = static_cast<int>(nodes), oversub = 1;
  net.reject_unknown_keys();

  topo.nodes = static_cast<int>(nodes);
  topo.devices_per_node = 1;
  auto router = std::make_unique<CpuClusterRouter>();
  router->rack_nodes = rack;
  int racks = (topo.nodes + rack - 1) / rack;
  std::vector<int> leaf(racks);
  for (int r = 0; r < racks; ++r)
    leaf[r] = topo.add_vertex(
        {VertexKind::switch_, fmt::format("rack{}/leaf", r), racks == 1 ? "switch" : "leaf", -1});
  for (int n = 0; n < topo.nodes; ++n) {
    int v = topo.add_vertex({VertexKind::device, fmt::format("node{}", n), "device", n});
    topo.device_vertex.push_back(v);
    router->vertex_node.resize(topo.vertices.size(), -1);
    router->vertex_node[v] = n;
    router->uplink.push_back(topo.add_link(v, leaf[n / rack], nic_bw, hop_lat, cls));
  }
  if (racks > 1) {
    int spine = topo.add_vertex({VertexKind::switch_, "spine", "spine", -1});
    double trunk = std::ceil(rack / oversub) * nic_bw;
    for (int r = 0; r < racks; ++r)
      router->trunk.push_back(topo.add_link(leaf[r], spine, trunk, hop_lat, cls));
  }
  router->vertex_node.resize(topo.vertices.size(), -1);
  topo.facts = {
      {"servers", fmt::format("{} x {} ({} cores, {:.0f} GiB DRAM at {:.0f} GB/s)", topo.nodes,
                              topo.device.name, topo.device.sm_count, memory / GiB, memory_bw / 1e9)},
      {"network",
       fmt::format("{} Gb/s {} per server, {}", nic_bw * 8 / 1e9, to_string(cls),
                   racks == 1 ? std::string("one switch")
                              : fmt::format("{} racks of {} under one spine, {}:1", racks, rack, oversub))},
  };
  topo.set_router(std::move(router));
  topo.set_family(std::make_shared<const CpuClusterData>());
  apply_fabric_profile(topo, root, base_dir);
  return topo;
}

}  // namespace podsim::topology
