// kind: wafer_cluster — Cerebras wafer-scale systems fed by MemoryX through a SwarmX tree.
//
// Model (docs/cerebras.md):
// - Each system (CS-2) is one device: a wafer-scale engine whose cores form a 2D mesh. The mesh is not
//   expanded into graph vertices: workloads place kernels on rectangles of it (WaferMesh) and cost the
//   traffic between neighbouring rectangles in closed form, because those links belong to the two
//   rectangles alone and nothing else competes for them.
// - Off the wafer everything is on the graph: each system's I/O (12 x 100 GbE on a CS-2, one trunk link as
//   the lanes are balanced) goes to a leaf SwarmX node; SwarmX nodes form a tree of `fan_out` children per
//   node; the root connects to MemoryX. SwarmX nodes and MemoryX are service endpoints (device ranks above
//   the wafers), so weight broadcast and gradient reduction are flows edge by edge on this tree.
#include "podsim/topology/wafer_cluster.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "podsim/core/config_node.hpp"
#include "podsim/core/error.hpp"
#include "podsim/topology/families.hpp"
#include "podsim/topology/loader.hpp"

namespace podsim::topology {
namespace {

constexpr int kMaxSystems = 192;  // SwarmX connects up to 192 CS-2 (validation/systems.md)

// A tree: every vertex but the top (MemoryX) has one parent link; a route climbs from both ends to the
// lowest common ancestor, which is the only (hence shortest) path in a tree.
class TreeRouter final : public Router {
 public:
  std::vector<int> parent_link;  // vertex -> link to its parent (a = child, b = parent), -1 at the top
  std::vector<int> parent;       // vertex -> its parent vertex, -1 at the top
  std::vector<int> depth;        // vertex -> distance from the top

  void route(int src, int dst, Route& out) const override {
    std::vector<Hop> down;
    while (src != dst) {
      if (depth[src] >= depth[dst]) {
        int l = parent_link[src];
        out.push_back({l, true});
        src = parent[src];
      } else {
        int l = parent_link[dst];
        down.push_back({l, false});
        dst = parent[dst];
      }
    }
    out.insert(out.end(), down.rbegin(), down.rend());
  }
  std::string describe() const override { return "tree: up to the common SwarmX node, then down"; }
};

// Link figures that are read from the YAML but kept only on the graph, not in WaferClusterSpec.
struct OffWaferLinks {
  double io_latency = 0, memx_latency = 0, swarm_bw = 0;
};

// The `device` block: the wafer's datasheet facts with their sources in the preset. Returns the wafer's
// aggregate fabric bandwidth (bytes/s) for `topo describe`.
double read_wafer(const ConfigNode& root, const std::string& base_dir, Topology& topo,
                  WaferClusterSpec& spec) {
  ConfigNode device = root.child("device");
  DeviceSpec& d = topo.device;
  d.name = device.string("name");
  ConfigNode peaks = device.child("peak_tflops");
  for (const auto& key : peaks.keys()) {
    try {
      d.peak_flops[parse_precision(key)] = peaks.positive(key) * 1e12;
    } catch (const std::invalid_argument& e) {
      peaks.fail(key, e.what());
    }
  }
  peaks.reject_unknown_keys();
  long long cores = device.positive_integer("cores");
  ConfigNode mesh = device.child("mesh");
  spec.mesh.columns = static_cast<int>(mesh.positive_integer("columns"));
  spec.mesh.rows = static_cast<int>(mesh.positive_integer("rows"));
  mesh.reject_unknown_keys();
  if (static_cast<long long>(spec.mesh.columns) * spec.mesh.rows > cores)
    device.fail("mesh", fmt::format("a {} x {} mesh has more cores than the wafer's {}", spec.mesh.columns,
                                    spec.mesh.rows, cores));
  spec.mesh.cores = cores;
  spec.sram_bytes = device.positive("sram_GB") * 1e9;
  spec.sram_bandwidth = device.positive("sram_bandwidth_PBps") * 1e15;
  // The aggregate fabric figure counts each core's four mesh links in both directions (32-bit wavelets per
  // clock on each: 850k cores x 8 x 32 bit x ~1 GHz = 220 Pb/s), so one link carries aggregate / (8 cores).
  double fabric = device.positive("fabric_bandwidth_Pbps") * 1e15 / 8;
  spec.mesh.link_bandwidth = fabric / (8.0 * static_cast<double>(cores));
  spec.mesh.hop_latency = device.positive_or("mesh_hop_latency_ns", 1) * 1e-9;
  d.hbm_bytes = spec.sram_bytes;  // the memory the device computes from is its SRAM
  d.hbm_bandwidth = spec.sram_bandwidth;
  d.sm_count = static_cast<int>(std::min<long long>(cores, 1 << 30));
  d.profile_path = read_profile_path(device, base_dir);
  device.reject_unknown_keys();
  spec.profile = calibration::load_wafer_profile(d.profile_path);
  topo.device_profile.device = spec.profile.device;
  topo.device_profile.file = spec.profile.file;
  topo.device_profile.provenance = spec.profile.provenance;
  return fabric;
}

// The `system`, `memoryx` and `swarmx` blocks: everything off the wafer.
OffWaferLinks read_off_wafer(const ConfigNode& root, WaferClusterSpec& spec) {
  OffWaferLinks links;
  ConfigNode system = root.child("system");
  spec.system_name = system.string("name");
  spec.system_io_bandwidth = system.positive("io_bandwidth_Gbps") * 1e9 / 8;
  links.io_latency = system.non_negative_or("io_latency_us", 1) * 1e-6;
  system.reject_unknown_keys();

  ConfigNode memx = root.child("memoryx");
  spec.memoryx_capacity_bytes = memx.positive("capacity_TB") * 1e12;
  spec.memoryx_bandwidth = memx.positive("bandwidth_Gbps") * 1e9 / 8;
  spec.memoryx_update_bandwidth = memx.positive("update_bandwidth_GBps") * 1e9;
  links.memx_latency = memx.non_negative_or("latency_us", 5) * 1e-6;
  memx.reject_unknown_keys();

  ConfigNode swarm = root.child("swarmx");
  spec.fan_out = static_cast<int>(swarm.positive_integer("fan_out"));
  if (spec.fan_out < 2) swarm.fail("fan_out", "a broadcast/reduce node has at least 2 children (SwarmX: 4)");
  links.swarm_bw = swarm.positive("link_bandwidth_Gbps") * 1e9 / 8;
  spec.swarmx_hop_latency = swarm.non_negative_or("hop_latency_us", 2) * 1e-6;
  swarm.reject_unknown_keys();
  return links;
}

// SwarmX levels, top down: one root, ..., ceil(systems / fan_out) leaf nodes.
std::vector<int> swarmx_level_sizes(const WaferClusterSpec& spec) {
  std::vector<int> level_sizes;
  for (int count = spec.systems;;) {
    count = (count + spec.fan_out - 1) / spec.fan_out;
    level_sizes.insert(level_sizes.begin(), count);
    if (count == 1) break;
  }
  return level_sizes;
}

// The tree on the graph: wafers first (ranks 0..systems-1), then MemoryX, then SwarmX level by level, so
// vertex ids equal device ranks (every vertex is an endpoint), which keeps tree_edges simple.
void build_tree(Topology& topo, TreeRouter& router, WaferClusterSpec& spec, const OffWaferLinks& links,
                const std::vector<int>& level_sizes) {
  auto add_endpoint = [&](const std::string& name, const std::string& role, int node, int depth) {
    int v = topo.add_vertex({VertexKind::device, name, role, node});
    topo.device_vertex.push_back(v);
    router.depth.push_back(depth);
    router.parent_link.push_back(-1);
    router.parent.push_back(-1);
    return v;
  };
  const int wafer_depth = spec.swarmx_levels + 1;
  for (int s = 0; s < spec.systems; ++s)
    add_endpoint(fmt::format("system{}/wafer", s), "device", s, wafer_depth);
  spec.memoryx = topo.device_count();
  int memx_vertex = add_endpoint("memoryx", "memoryx", -1, 0);
  std::vector<std::vector<int>> level_vertices;
  for (int l = 0; l < spec.swarmx_levels; ++l) {
    level_vertices.emplace_back();
    for (int i = 0; i < level_sizes[l]; ++i) {
      spec.swarmx.push_back(topo.device_count());
      level_vertices.back().push_back(add_endpoint(fmt::format("swarmx{}.{}", l, i), "swarmx", -1, l + 1));
    }
  }
  auto link = [&](int child, int parent, double bw, double latency) {
    router.parent_link[child] = topo.add_link(child, parent, bw, latency, LinkClass::ethernet);
    router.parent[child] = parent;
    spec.tree_edges.emplace_back(parent, child);
  };
  link(level_vertices[0][0], memx_vertex, spec.memoryx_bandwidth, links.memx_latency);
  for (int l = 1; l < spec.swarmx_levels; ++l)
    for (int i = 0; i < level_sizes[l]; ++i)
      link(level_vertices[l][i], level_vertices[l - 1][i / spec.fan_out], links.swarm_bw,
           spec.swarmx_hop_latency);
  for (int s = 0; s < spec.systems; ++s)
    link(topo.device_vertex[s], level_vertices.back()[s / spec.fan_out], spec.system_io_bandwidth,
         links.io_latency);
  // Parents before children, as WaferClusterSpec::tree_edges promises its users.
  std::sort(spec.tree_edges.begin(), spec.tree_edges.end(),
            [&](auto x, auto y) { return router.depth[x.first] < router.depth[y.first]; });
}

// The lines `podsim topo describe` prints for this family.
void describe_wafer_cluster(Topology& topo, const WaferClusterSpec& spec, const OffWaferLinks& links,
                            const std::vector<int>& level_sizes, double fabric) {
  std::string levels;
  for (int n : level_sizes) levels += fmt::format("{}{}", levels.empty() ? "" : " + ", n);
  topo.facts = {
      {"systems", fmt::format("{} x {} ({} each)", spec.systems, spec.system_name, topo.device.name)},
      {"wafer",
       fmt::format("{} cores, usable mesh {} x {}, {:.0f} GB SRAM at {:.0f} PB/s", spec.mesh.cores,
                   spec.mesh.columns, spec.mesh.rows, spec.sram_bytes / 1e9, spec.sram_bandwidth / 1e15)},
      {"mesh links", fmt::format("{:.2f} GB/s per direction per core-to-core link ({:.0f} Pb/s aggregate)",
                                 spec.mesh.link_bandwidth / 1e9, fabric * 8 / 1e15)},
      {"system I/O", fmt::format("{:.0f} Gb/s per direction", spec.system_io_bandwidth * 8 / 1e9)},
      {"SwarmX",
       fmt::format("tree of fan-out {}: {} nodes in {} level(s) ({}), {:.0f} Gb/s links", spec.fan_out,
                   spec.swarmx.size(), spec.swarmx_levels, levels, links.swarm_bw * 8 / 1e9)},
      {"MemoryX", fmt::format("{:.0f} TB, {:.0f} Gb/s to SwarmX, weight update at {:.0f} GB/s",
                              spec.memoryx_capacity_bytes / 1e12, spec.memoryx_bandwidth * 8 / 1e9,
                              spec.memoryx_update_bandwidth / 1e9)},
      {"endpoints", fmt::format("ranks 0-{} wafers, {} MemoryX, {}-{} SwarmX (service endpoints)",
                                spec.systems - 1, spec.memoryx, spec.swarmx.front(), spec.swarmx.back())},
  };
}

}  // namespace

Topology build_wafer_cluster(const ConfigNode& root, const std::string& base_dir) {
  Topology topo;
  auto spec = std::make_shared<WaferClusterSpec>();
  topo.name = read_document_name(root);
  long long systems = root.positive_integer("systems");
  if (systems > kMaxSystems)
    root.fail("systems",
              fmt::format("{} systems: a SwarmX fabric connects 1 to {} CS-2 systems", systems, kMaxSystems));
  spec->systems = static_cast<int>(systems);

  double fabric = read_wafer(root, base_dir, topo, *spec);
  OffWaferLinks links = read_off_wafer(root, *spec);
  std::vector<int> level_sizes = swarmx_level_sizes(*spec);
  spec->swarmx_levels = static_cast<int>(level_sizes.size());

  auto router = std::make_unique<TreeRouter>();
  build_tree(topo, *router, *spec, links, level_sizes);
  topo.nodes = spec->systems;
  topo.devices_per_node = 1;
  topo.compute_devices = spec->systems;
  describe_wafer_cluster(topo, *spec, links, level_sizes, fabric);
  topo.set_router(std::move(router));
  apply_fabric_profile(topo, root, base_dir);
  topo.set_family<WaferClusterSpec>(spec);
  return topo;
}

}  // namespace podsim::topology
