// kind: gpu_cluster — DGX-style servers joined by a rail-optimized InfiniBand fat tree.
//
// Model (documented in README "Topology models"):
// - Inside a server every GPU has one full-duplex link to a logical NVSwitch vertex with the GPU's total
//   NVLink bandwidth (NVSwitch is non-blocking, so the per-GPU port is the only constraint).
//   `node.devices_used` builds only the GPUs a job runs on (and their NICs): idle GPUs carry no traffic.
//   `scale_up.domain_devices` (default node.devices) makes one NVLink domain of several servers (NVL36x2,
//   NVL576): their GPUs share one NVSwitch vertex, and traffic inside the domain never touches a NIC.
// - Each GPU reaches the NIC of its rail over PCIe; NIC r of every server connects to leaf r of its
//   scalable unit (SU). Leaves of rail r connect to the spines of rail r (trunks stand for the parallel
//   cables, i.e. perfectly balanced ECMP), and above `sus_per_spine_group` SUs a core level joins spine
//   groups, again per rail. The fabric is therefore one fat tree per rail.
// - With a core level every spine gives half its ports to the cores (a folded Clos), and spine j of every
//   group of a rail joins the same core plane (rail, j). A plane is one logical non-blocking switch standing
//   for its core switches, as a trunk stands for its cables: splitting a spine's uplinks over every core of
//   a plane would make trunks thinner than one cable once there are more pods than core ports (100 pods of
//   4 SUs at 12,800 servers), and D-mod-k would then pin whole flows on a third of a cable.
// - Traffic between GPUs on different rails first crosses NVLink to the GPU on the destination's rail
//   (NCCL's PXN), so InfiniBand traffic is always rail-aligned. This is what makes folding symmetric
//   TP ranks exact in the workload layer: two rails never share an InfiniBand link.
#include <fmt/format.h>

#include <cmath>
#include <stdexcept>
#include <unordered_map>

#include "podsim/core/config_choice.hpp"
#include "podsim/core/config_node.hpp"
#include "podsim/core/error.hpp"
#include "podsim/topology/families.hpp"
#include "podsim/topology/host_spec.hpp"
#include "podsim/topology/loader.hpp"

namespace podsim::topology {
namespace {

struct FatTreeShape {
  int nodes = 0, gpus = 0, nics = 0;
  int domain_nodes = 1;  // servers per NVLink domain (scale_up.domain_devices / node.devices)
  int su_nodes = 0, sus = 0, sus_per_group = 0, groups = 0;
  int spines_per_rail = 0;  // per spine group; also the core planes per rail when groups > 1
  int cores_per_plane = 0;  // physical core switches per plane; 0 when two levels suffice
};

class RailFatTreeRouter final : public Router {
 public:
  FatTreeShape shape;
  std::vector<int> vertex_device;    // vertex -> device rank or -1
  std::vector<int> device_rail;      // device -> rail
  std::vector<int> gpu_nvswitch;     // device -> link (a = gpu, b = nvswitch)
  std::vector<int> gpu_nic;          // device -> link (a = gpu, b = nic)
  std::vector<int> device_nvswitch;  // device -> vertex of its NVLink domain's switch
  std::vector<int> rail_gpu;         // node * nics + rail -> first device on that rail (PXN relay)
  std::vector<int> nic_leaf;         // node * nics + rail -> link (a = nic, b = leaf)
  std::vector<int> leaf_spine;       // (su * nics + rail) * spines_per_rail + j -> link (a = leaf, b = spine)
  std::vector<int> spine_core;       // spine index -> link (a = spine, b = its core plane)
  // With in-network reduction: the link between two adjacent switches of a SHARP tree, by their vertices.
  std::unordered_map<long long, std::pair<int, int>> switch_link;  // -> (link, its `a` vertex)
  std::vector<int> leaf_of_nic;  // node * nics + rail -> vertex of the leaf that NIC is cabled to

  static long long switch_pair(int a, int b) {
    return static_cast<long long>(std::min(a, b)) << 32 | static_cast<unsigned>(std::max(a, b));
  }

  int spine_index(int group, int rail, int j) const {
    return (group * shape.nics + rail) * shape.spines_per_rail + j;
  }

  void route(int src_vertex, int dst_vertex, Route& out) const override {
    int s = vertex_device[src_vertex], d = vertex_device[dst_vertex];
    if (s < 0 || d < 0) return route_switch(src_vertex, dst_vertex, out);
    int ns = s / shape.gpus, nd = d / shape.gpus;
    if (ns / shape.domain_nodes == nd / shape.domain_nodes) {  // one NVLink domain: NVSwitch only
      out.push_back({gpu_nvswitch[s], true});
      out.push_back({gpu_nvswitch[d], false});
      return;
    }
    int rail = device_rail[d];
    int relay = s;
    if (device_rail[s] != rail) {  // PXN: cross NVLink to the GPU on the destination's rail
      relay = rail_gpu[ns * shape.nics + rail];
      out.push_back({gpu_nvswitch[s], true});
      out.push_back({gpu_nvswitch[relay], false});
    }
    out.push_back({gpu_nic[relay], true});
    out.push_back({nic_leaf[ns * shape.nics + rail], true});
    int su_s = ns / shape.su_nodes, su_d = nd / shape.su_nodes;
    if (su_s != su_d) {
      int j = nd % shape.spines_per_rail;  // D-mod-k: the destination picks the spine
      int leaf_s = su_s * shape.nics + rail, leaf_d = su_d * shape.nics + rail;
      int g_s = su_s / shape.sus_per_group, g_d = su_d / shape.sus_per_group;
      out.push_back({leaf_spine[leaf_s * shape.spines_per_rail + j], true});
      if (g_s != g_d) {  // up to core plane (rail, j), down to spine j of the destination's group
        out.push_back({spine_core[spine_index(g_s, rail, j)], true});
        out.push_back({spine_core[spine_index(g_d, rail, j)], false});
      }
      out.push_back({leaf_spine[leaf_d * shape.spines_per_rail + j], false});
    }
    out.push_back({nic_leaf[nd * shape.nics + rail], false});
    out.push_back({gpu_nic[d], false});
  }

  // Flows that end at a reducing switch. NVLink SHARP: between a GPU and the NVSwitch of its own NVLink
  // domain, the GPU's NVLink port. InfiniBand SHARP: between a GPU and its rail's leaf (PCIe to its NIC,
  // the NIC's cable), and between two adjacent switches of the aggregation tree (their link).
  void route_switch(int src_vertex, int dst_vertex, Route& out) const {
    if (vertex_device[src_vertex] < 0 && vertex_device[dst_vertex] < 0) {
      auto it = switch_link.find(switch_pair(src_vertex, dst_vertex));
      if (it == switch_link.end()) fail_switch_route(src_vertex, dst_vertex);
      out.push_back({it->second.first, it->second.second == src_vertex});
      return;
    }
    bool up = vertex_device[src_vertex] >= 0;
    int device = vertex_device[up ? src_vertex : dst_vertex], sw = up ? dst_vertex : src_vertex;
    if (device_nvswitch[device] == sw) {
      out.push_back({gpu_nvswitch[device], up});
      return;
    }
    int node = device / shape.gpus, rail = device_rail[device];
    if (leaf_of_nic.empty() || leaf_of_nic[node * shape.nics + rail] != sw)
      fail_switch_route(src_vertex, dst_vertex);
    if (up) {
      out.push_back({gpu_nic[device], true});
      out.push_back({nic_leaf[node * shape.nics + rail], true});
    } else {
      out.push_back({nic_leaf[node * shape.nics + rail], false});
      out.push_back({gpu_nic[device], false});
    }
  }

  [[noreturn]] static void fail_switch_route(int src_vertex, int dst_vertex) {
    throw std::logic_error(fmt::format(
        "gpu_cluster: no route {} -> {} (a switch end must be the GPU's NVSwitch, or with in-network "
        "reduction its rail's leaf or the next switch of the aggregation tree)",
        src_vertex, dst_vertex));
  }

  std::string describe() const override {
    return shape.cores_per_plane
               ? "rail-aligned up/down (PXN across rails), D-mod-k spine choice, spine j to core plane j"
               : "rail-aligned up/down (PXN across rails), D-mod-k spine choice";
  }
};

// Devices beyond which podsim refuses a topology before building it (10^9 devices would need ~100 GB).
constexpr long long kMaxDevices = 262144;

int round_up(int value, int multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// What the YAML says about one server and the fabric, before anything is built.
struct GpuClusterSpec {
  double nvlink_bw = 0, nvlink_lat = 0;
  int nvswitch_chips = 0;
  double nic_bw = 0, pcie_bw = 0, pcie_lat = 0;
  int radix = 0;
  double hop_lat = 0, oversub = 1;
  double core_oversub = 1;  // spine-to-core uplinks (fabric.core_oversubscription), between spine groups
  int domain_devices = 0;   // devices on one NVLink domain
  bool sharp = false;       // fabric.in_network_reduction: sharp (the InfiniBand switches reduce)
};

// Link bandwidths that follow from the sizing of the tree (see size_fat_tree).
struct TierBandwidth {
  double leaf_up = 0;     // all uplinks of one leaf
  double spine_down = 0;  // all downlinks of one spine
  double spine_up = 0;    // all uplinks of one spine to its core plane (with more than one spine group)
};

// `scale_up.domain_devices`: how many servers one NVLink domain spans. The domain is whole servers and the
// cluster whole domains, so a preset can never describe half a rack.
int read_domain_nodes(const ConfigNode& scale_up, const ConfigNode& root, long long nodes, int gpus,
                      GpuClusterSpec& spec) {
  spec.domain_devices = static_cast<int>(scale_up.integer_in_or("domain_devices", 1, kMaxDevices, gpus));
  if (spec.domain_devices % gpus != 0)
    scale_up.fail(
        "domain_devices",
        fmt::format("an NVLink domain of {} devices is not whole servers of node.devices = {}; use a "
                    "multiple of {}",
                    spec.domain_devices, gpus, gpus));
  int domain_nodes = spec.domain_devices / gpus;
  if (nodes % domain_nodes != 0)
    root.fail("nodes", fmt::format("{} servers cannot be split into NVLink domains of {} servers "
                                   "(scale_up.domain_devices = {}); use a multiple of {}",
                                   nodes, domain_nodes, spec.domain_devices, domain_nodes));
  return domain_nodes;
}

// The `node` block: GPUs, NVSwitch plane, NICs and PCIe. Reads keys in the order the errors have always
// been reported in, so a preset with several mistakes still names the same one first.
void read_server(const ConfigNode& root, long long nodes, Topology& topo, FatTreeShape& shape,
                 GpuClusterSpec& spec) {
  ConfigNode node = root.child("node");
  node.string_or("name", "");
  int gpus = static_cast<int>(node.integer_in("devices", 1, 1024));
  if (nodes * gpus > kMaxDevices)
    root.fail("nodes",
              fmt::format(
                  "{} servers x {} devices = {} devices is more than podsim simulates ({}); use fewer nodes",
                  nodes, gpus, nodes * gpus, kMaxDevices));
  ConfigNode scale_up = node.child("scale_up");
  spec.nvlink_bw = scale_up.positive("bandwidth_GBps") * 1e9;
  spec.nvlink_lat = scale_up.non_negative_or("latency_us", 0.5) * 1e-6;
  spec.nvswitch_chips = static_cast<int>(scale_up.integer_in_or("switches", 1, 1024, 1));
  shape.domain_nodes = read_domain_nodes(scale_up, root, nodes, gpus, spec);
  scale_up.choice_or("kind", {"nvswitch"}, "nvswitch");
  scale_up.reject_unknown_keys();
  int nics = static_cast<int>(node.positive_integer("nics"));
  if (nics > gpus || gpus % nics != 0)
    node.fail("nics", fmt::format("{} NICs cannot be shared evenly by {} devices; use a divisor of {}", nics,
                                  gpus, gpus));
  // `devices_used`: the job runs on this many GPUs of every server and the rest stay idle, as jobs on NVL72
  // racks commonly use 16 of the 18 compute trays (64 GPUs: an EP or DP group of 64 stays on one NVLink
  // domain) or as `torchrun --nproc-per-node 4` uses half a DGX. The idle GPUs, with the NICs only they
  // use, carry none of the job's traffic: the server is built with the used GPUs and their NICs (same
  // NVLink bandwidth per GPU, same NIC per GPU, same number of servers per NVLink domain).
  int used = static_cast<int>(node.integer_in_or("devices_used", 1, gpus, gpus));
  if (used < gpus) {
    int per_nic = gpus / nics;
    if (used % per_nic != 0)
      node.fail("devices_used", fmt::format("{} of {} GPUs would leave a NIC half used ({} GPUs share each "
                                            "of the {} NICs); use a multiple of {}",
                                            used, gpus, per_nic, nics, per_nic));
    topo.installed_devices_per_node = gpus;
    nics = used / per_nic;
    spec.domain_devices = shape.domain_nodes * used;
    gpus = used;
  }
  spec.nic_bw = node.positive("nic_bandwidth_Gbps") * 1e9 / 8;
  spec.pcie_bw = node.positive("pcie_bandwidth_GBps") * 1e9;
  spec.pcie_lat = node.non_negative_or("pcie_latency_us", 0.5) * 1e-6;
  topo.host = read_host_spec(node);  // optional DRAM and SSD of the server (parameter-server workloads)
  topo.host.pcie_bandwidth = spec.pcie_bw;
  node.reject_unknown_keys();
  shape.nodes = static_cast<int>(nodes);
  shape.gpus = gpus;
  shape.nics = nics;
}

// The `fabric` block: scalable units, spine groups and the switches they are built from.
void read_fabric(const ConfigNode& root, FatTreeShape& shape, GpuClusterSpec& spec) {
  ConfigNode fabric = root.child("fabric");
  fabric.choice("kind", {"rail_optimized_fat_tree"});
  shape.su_nodes = static_cast<int>(fabric.integer_in("scalable_unit_nodes", 1, 4096));
  shape.sus_per_group = static_cast<int>(fabric.integer_in("sus_per_spine_group", 1, 4096));
  spec.radix = static_cast<int>(fabric.integer_in("switch_radix", 4, 4096));
  spec.hop_lat = fabric.non_negative_or("hop_latency_us", 0.6) * 1e-6;
  spec.oversub = fabric.positive_or("oversubscription", 1.0);
  if (spec.oversub < 1) fabric.fail("oversubscription", "must be 1 (non-blocking) or more (e.g. 2 for 2:1)");
  // Large clusters often taper above the pod: Meta's Llama 3 cluster joins its pods of 3,072 GPUs 1:7.
  spec.core_oversub = fabric.positive_or("core_oversubscription", 1.0);
  if (spec.core_oversub < 1)
    fabric.fail("core_oversubscription",
                "must be 1 (non-blocking between spine groups) or more (e.g. 7 for 1:7 above each pod)");
  // NCCL runs CollNet (SHARP) only when asked (NCCL_COLLNET_ENABLE=1 with the SHARP plugin): off by default.
  spec.sharp = fabric.choice_or("in_network_reduction", {"none", "sharp"}, "none") == "sharp";
  fabric.reject_unknown_keys();
  if (shape.su_nodes > spec.radix)
    fabric.fail("scalable_unit_nodes", fmt::format("an SU of {} servers needs leaves with more than {} ports",
                                                   shape.su_nodes, spec.radix));
}

// Counts switches per tier from the switch radix: the fewest spines (and cores) whose ports take every
// uplink below them, split evenly among rails so that each rail stays its own fat tree. With a core level
// a spine has only half its ports for the leaves; above the leaves the tree is non-blocking.
TierBandwidth size_fat_tree(FatTreeShape& shape, const GpuClusterSpec& spec) {
  const int nics = shape.nics, radix = spec.radix;
  shape.sus = (shape.nodes + shape.su_nodes - 1) / shape.su_nodes;
  shape.groups = (shape.sus + shape.sus_per_group - 1) / shape.sus_per_group;
  int sus_in_group = std::min(shape.sus, shape.sus_per_group);
  int leaf_up_ports = static_cast<int>(std::ceil(shape.su_nodes / spec.oversub));
  int spine_down_ports = shape.groups > 1 ? std::max(1, radix / 2) : radix;
  // Spines of one group: enough ports for every leaf uplink of the group, split evenly among rails.
  int uplinks = sus_in_group * nics * leaf_up_ports;
  int spines_per_group = round_up((uplinks + spine_down_ports - 1) / spine_down_ports, nics);
  shape.spines_per_rail = std::max(1, spines_per_group / nics);
  TierBandwidth bw;
  bw.leaf_up = leaf_up_ports * spec.nic_bw;
  bw.spine_down = sus_in_group * bw.leaf_up / shape.spines_per_rail;
  if (shape.groups > 1) {
    // Each spine sends up as many cables as come up to it; a plane's cores take every pod's spine j.
    int spine_up_ports = (sus_in_group * leaf_up_ports + shape.spines_per_rail - 1) / shape.spines_per_rail;
    spine_up_ports = std::max(1, static_cast<int>(std::ceil(spine_up_ports / spec.core_oversub)));
    bw.spine_up = bw.spine_down / spec.core_oversub;
    shape.cores_per_plane = std::max(1, (shape.groups * spine_up_ports + radix - 1) / radix);
  }
  return bw;
}

// Servers: GPUs, the NVSwitch plane, NICs. Returns the NIC vertex of each (server, rail) for the fabric.
std::vector<int> add_servers(Topology& topo, RailFatTreeRouter& router, const GpuClusterSpec& spec,
                             std::vector<int>& rails) {
  const FatTreeShape& shape = router.shape;
  const int nics = shape.nics, gpus = shape.gpus;
  std::vector<int> nic_vertex(static_cast<size_t>(shape.nodes) * nics);
  int nvswitch = -1;
  for (int n = 0; n < shape.nodes; ++n) {
    if (n % shape.domain_nodes == 0)  // one NVSwitch vertex per NVLink domain
      nvswitch = topo.add_vertex(
          shape.domain_nodes == 1
              ? Vertex{VertexKind::switch_, fmt::format("node{}/nvswitch", n), "nvswitch", n}
              : Vertex{VertexKind::switch_, fmt::format("domain{}/nvswitch", n / shape.domain_nodes),
                       "nvswitch", -1});
    for (int r = 0; r < nics; ++r)
      nic_vertex[n * nics + r] =
          topo.add_vertex({VertexKind::nic, fmt::format("node{}/nic{}", n, r), "nic", n});
    for (int g = 0; g < gpus; ++g) {
      int dev = n * gpus + g;
      int v = topo.add_vertex({VertexKind::device, fmt::format("node{}/gpu{}", n, g), "gpu", n});
      topo.device_vertex.push_back(v);
      router.vertex_device.resize(topo.vertices.size(), -1);
      router.vertex_device[v] = dev;
      int rail = g * nics / gpus;
      rails.push_back(rail);
      router.device_rail.push_back(rail);
      router.gpu_nvswitch.push_back(
          topo.add_link(v, nvswitch, spec.nvlink_bw, spec.nvlink_lat, LinkClass::nvlink));
      router.device_nvswitch.push_back(nvswitch);
      router.gpu_nic.push_back(
          topo.add_link(v, nic_vertex[n * nics + rail], spec.pcie_bw, spec.pcie_lat, LinkClass::pcie));
    }
    for (int r = 0; r < nics; ++r) {
      int first = -1;
      for (int g = 0; g < gpus && first < 0; ++g)
        if (g * nics / gpus == r) first = n * gpus + g;
      router.rail_gpu.push_back(first);
    }
  }
  return nic_vertex;
}

// Leaves per (SU, rail), each NIC to the leaf of its rail. Returns the leaf vertices.
std::vector<int> add_leaves(Topology& topo, RailFatTreeRouter& router, const GpuClusterSpec& spec,
                            const std::vector<int>& nic_vertex) {
  const FatTreeShape& shape = router.shape;
  const int nics = shape.nics;
  std::vector<int> leaf_vertex(static_cast<size_t>(shape.sus) * nics);
  for (int su = 0; su < shape.sus; ++su)
    for (int r = 0; r < nics; ++r)
      leaf_vertex[su * nics + r] =
          topo.add_vertex({VertexKind::switch_, fmt::format("su{}/leaf{}", su, r), "leaf", -1});
  router.nic_leaf.resize(static_cast<size_t>(shape.nodes) * nics);
  router.leaf_of_nic.resize(router.nic_leaf.size());
  for (int n = 0; n < shape.nodes; ++n)
    for (int r = 0; r < nics; ++r) {
      int leaf = leaf_vertex[(n / shape.su_nodes) * nics + r];
      router.nic_leaf[n * nics + r] =
          topo.add_link(nic_vertex[n * nics + r], leaf, spec.nic_bw, spec.hop_lat, LinkClass::infiniband);
      router.leaf_of_nic[n * nics + r] = leaf;
    }
  return leaf_vertex;
}

// Spines per (group, rail), each leaf trunked to every spine of its group and rail. Returns the spines.
std::vector<int> add_spines(Topology& topo, RailFatTreeRouter& router, const GpuClusterSpec& spec,
                            const TierBandwidth& bw, const std::vector<int>& leaf_vertex) {
  const FatTreeShape& shape = router.shape;
  const int nics = shape.nics;
  std::vector<int> spine_vertex(static_cast<size_t>(shape.groups) * nics * shape.spines_per_rail);
  for (int g = 0; g < shape.groups; ++g)
    for (int r = 0; r < nics; ++r)
      for (int j = 0; j < shape.spines_per_rail; ++j)
        spine_vertex[router.spine_index(g, r, j)] =
            topo.add_vertex({VertexKind::switch_, fmt::format("group{}/spine{}.{}", g, r, j), "spine", -1});
  router.leaf_spine.resize(static_cast<size_t>(shape.sus) * nics * shape.spines_per_rail);
  double trunk = bw.leaf_up / shape.spines_per_rail;
  for (int su = 0; su < shape.sus; ++su)
    for (int r = 0; r < nics; ++r)
      for (int j = 0; j < shape.spines_per_rail; ++j)
        router.leaf_spine[(su * nics + r) * shape.spines_per_rail + j] = topo.add_link(
            leaf_vertex[su * nics + r], spine_vertex[router.spine_index(su / shape.sus_per_group, r, j)],
            trunk, spec.hop_lat, LinkClass::infiniband);
  return spine_vertex;
}

// Core planes per (rail, j), spine j of every group trunked to its plane with all its uplinks (only with
// more than one spine group). The plane is non-blocking: it stands for cores_per_plane switches.
void add_cores(Topology& topo, RailFatTreeRouter& router, const GpuClusterSpec& spec, const TierBandwidth& bw,
               const std::vector<int>& spine_vertex) {
  const FatTreeShape& shape = router.shape;
  const int nics = shape.nics, planes = shape.spines_per_rail;
  std::vector<int> plane_vertex(static_cast<size_t>(nics) * planes);
  for (int r = 0; r < nics; ++r)
    for (int j = 0; j < planes; ++j)
      plane_vertex[r * planes + j] =
          topo.add_vertex({VertexKind::switch_, fmt::format("core-plane{}.{}", r, j), "core plane", -1});
  router.spine_core.resize(spine_vertex.size());
  for (int g = 0; g < shape.groups; ++g)
    for (int r = 0; r < nics; ++r)
      for (int j = 0; j < planes; ++j)
        router.spine_core[router.spine_index(g, r, j)] =
            topo.add_link(spine_vertex[router.spine_index(g, r, j)], plane_vertex[r * planes + j],
                          bw.spine_up, spec.hop_lat, LinkClass::infiniband);
}

// Fabric: only the tiers the size needs (one server has none, one SU only leaves, one group no cores).
void add_fabric(Topology& topo, RailFatTreeRouter& router, const GpuClusterSpec& spec,
                const TierBandwidth& bw, const std::vector<int>& nic_vertex) {
  const FatTreeShape& shape = router.shape;
  if (shape.nodes <= 1) return;
  std::vector<int> leaf_vertex = add_leaves(topo, router, spec, nic_vertex);
  if (shape.sus <= 1) return;
  std::vector<int> spine_vertex = add_spines(topo, router, spec, bw, leaf_vertex);
  if (shape.groups > 1) add_cores(topo, router, spec, bw, spine_vertex);
}

// The lines `podsim topo describe` prints for this family.
void describe_gpu_cluster(Topology& topo, const FatTreeShape& shape, const GpuClusterSpec& spec) {
  topo.facts = {
      {"servers", topo.installed_devices_per_node > 0
                      ? fmt::format("{} x {} {}, the job on {} of each ({} devices: node.devices_used)",
                                    shape.nodes, topo.installed_devices_per_node, topo.device.name,
                                    shape.gpus, shape.nodes * shape.gpus)
                      : fmt::format("{} x {} {} ({} devices)", shape.nodes, shape.gpus, topo.device.name,
                                    shape.nodes * shape.gpus)},
      {"scale-up", fmt::format("NVLink {:.0f} GB/s per GPU per direction, {} NVSwitch chips per server",
                               spec.nvlink_bw / 1e9, spec.nvswitch_chips)},
      {"NVLink domain",
       fmt::format("{} devices ({} server{}), {} domain{}", spec.domain_devices, shape.domain_nodes,
                   shape.domain_nodes == 1 ? "" : "s", shape.nodes / shape.domain_nodes,
                   shape.nodes / shape.domain_nodes == 1 ? "" : "s")},
      {"rails", fmt::format("{} NICs per server at {:.0f} Gb/s", shape.nics, spec.nic_bw * 8 / 1e9)},
      {"scalable units", fmt::format("{} of {} servers", shape.sus, shape.su_nodes)},
      {"fat tree",
       shape.nodes == 1 ? std::string("none (one server)")
       : shape.sus == 1 ? std::string("one leaf level")
       : shape.groups == 1
           ? fmt::format("leaf/spine ({} spines per rail)", shape.spines_per_rail)
           : fmt::format("leaf/spine/core ({} spine groups of {} SUs; per rail {} core planes of "
                         "{} switches, each plane modelled as one non-blocking switch)",
                         shape.groups, shape.sus_per_group, shape.spines_per_rail, shape.cores_per_plane)},
      {"oversubscription", shape.groups > 1
                               ? fmt::format("{}:1 at the leaves, {}:1 from the spines to the cores",
                                             spec.oversub, spec.core_oversub)
                               : fmt::format("{}:1", spec.oversub)},
      {"SHARP", spec.sharp ? std::string("InfiniBand switches reduce, one aggregation tree per rail "
                                         "(collnet_direct, nvls across servers)")
                           : std::string("off (fabric.in_network_reduction: sharp turns it on)")},
  };
  if (shape.groups > 1)
    topo.facts.push_back(
        {"core switches",
         fmt::format(
             "{} ({} planes x {} switches){}", shape.nics * shape.spines_per_rail * shape.cores_per_plane,
             shape.nics * shape.spines_per_rail, shape.cores_per_plane,
             shape.groups > spec.radix
                 ? fmt::format("; {} pods exceed a core's {} ports, so a real plane needs larger pods or "
                               "a fourth tier (modelled as one non-blocking plane anyway)",
                               shape.groups, spec.radix)
                 : std::string())});
  if (topo.host.has_memory() || topo.host.has_ssd()) topo.facts.push_back({"host", describe_host(topo.host)});
}

// InfiniBand SHARP's aggregation tree per rail: every device's leaf, spine 0 of its group and rail, and
// core plane (rail, 0), as far as the fabric has tiers. One tree per rail: SHARP reduces a rail's servers
// through one tree, whose links each carry the reduced data once per direction. Records the switch links
// of those trees for the router.
std::vector<std::array<int, 3>> sharp_uplinks(const Topology& topo, RailFatTreeRouter& router) {
  const FatTreeShape& shape = router.shape;
  std::vector<std::array<int, 3>> up(static_cast<size_t>(shape.nodes) * shape.gpus, {-1, -1, -1});
  if (router.nic_leaf.empty()) return up;  // one server: no fabric to reduce in
  for (int d = 0; d < static_cast<int>(up.size()); ++d) {
    int node = d / shape.gpus, rail = router.device_rail[d], su = node / shape.su_nodes;
    up[d][0] = router.leaf_of_nic[node * shape.nics + rail];
    if (router.leaf_spine.empty()) continue;
    int ls = router.leaf_spine[(su * shape.nics + rail) * shape.spines_per_rail];
    up[d][1] = topo.links[ls].b;
    router.switch_link[RailFatTreeRouter::switch_pair(up[d][0], up[d][1])] = {ls, topo.links[ls].a};
    if (router.spine_core.empty()) continue;
    int sc = router.spine_core[router.spine_index(su / shape.sus_per_group, rail, 0)];
    up[d][2] = topo.links[sc].b;
    router.switch_link[RailFatTreeRouter::switch_pair(up[d][1], up[d][2])] = {sc, topo.links[sc].a};
  }
  return up;
}

}  // namespace

Topology build_gpu_cluster(const ConfigNode& root, const std::string& base_dir) {
  Topology topo;
  topo.name = read_document_name(root);
  long long nodes = read_server_count(root);

  ConfigNode device = root.child("device");
  // Optional GPU generation; read before read_device_spec, which rejects keys it did not read.
  auto arch =
      choice_or(device, "architecture", kArchitectureNames,
                {Architecture::volta, Architecture::ampere, Architecture::hopper, Architecture::blackwell},
                Architecture::unknown);
  topo.device = read_device_spec(device, base_dir);
  topo.device.architecture = arch;
  topo.device_profile = calibration::load_device_profile(topo.device.profile_path);

  FatTreeShape shape;
  GpuClusterSpec spec;
  read_server(root, nodes, topo, shape, spec);
  read_fabric(root, shape, spec);
  TierBandwidth bw = size_fat_tree(shape, spec);

  topo.nodes = shape.nodes;
  topo.devices_per_node = shape.gpus;
  auto router = std::make_unique<RailFatTreeRouter>();
  router->shape = shape;
  std::vector<int> rails;
  std::vector<int> nic_vertex = add_servers(topo, *router, spec, rails);
  add_fabric(topo, *router, spec, bw, nic_vertex);
  router->vertex_device.resize(topo.vertices.size(), -1);  // switches added last map to no device
  topo.set_rails(std::move(rails));
  describe_gpu_cluster(topo, shape, spec);
  GpuClusterData family{router->device_nvswitch, {}};
  family.tapered = (spec.oversub > 1 && shape.sus > 1) || (spec.core_oversub > 1 && shape.groups > 1);
  if (spec.sharp) family.reduction_uplinks = sharp_uplinks(topo, *router);
  topo.set_family(std::make_shared<const GpuClusterData>(std::move(family)));
  topo.set_router(std::move(router));
  apply_fabric_profile(topo, root, base_dir);
  if (spec.sharp && !topo.fabric_profile.protocol("collnet", "simple"))
    root.child("fabric").fail(
        "in_network_reduction",
        fmt::format("sharp needs the fabric profile ({}) to calibrate in-network reduction "
                    "(`protocols: collnet: simple:`); use none, or a profile that has it",
                    topo.fabric_profile_path));
  return topo;
}

}  // namespace podsim::topology
