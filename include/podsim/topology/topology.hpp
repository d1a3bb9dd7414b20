// The hardware graph: devices, NICs and switches joined by full-duplex links, with a router that knows
// the path a flow takes between two devices. Everything above this layer (collective algorithms, the
// engine's platform) sees only this typed model, never the YAML it came from.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "podsim/calibration/device_profile.hpp"
#include "podsim/calibration/fabric_profile.hpp"
#include "podsim/topology/device_spec.hpp"
#include "podsim/topology/device_speed.hpp"

namespace podsim::topology {

// Family data: what one family knows beyond the generic graph and layers above need, one struct per
// family in its own header (an empty tag when the graph says it all). Read it with topo.family<T>().
struct GpuClusterData;    // topology/families.hpp
struct CpuClusterData;    // topology/families.hpp
struct TorusGeometry;     // topology/torus.hpp
struct WaferClusterSpec;  // topology/wafer_cluster.hpp
// One alternative per family (std::monostate: a graph built by hand). Shared and immutable so that copies
// of a Topology, and a family's router, read one instance.
using FamilyData =
    std::variant<std::monostate, std::shared_ptr<const GpuClusterData>, std::shared_ptr<const TorusGeometry>,
                 std::shared_ptr<const WaferClusterSpec>, std::shared_ptr<const CpuClusterData>>;

// Links are grouped into classes because calibration (achieved bandwidth, per-hop latency of collectives)
// is measured per class, e.g. NCCL on NVLink vs on InfiniBand.
enum class LinkClass { nvlink, pcie, infiniband, ethernet, ici, wafer_mesh, fabric };
inline constexpr auto kLinkClassNames = name_table<LinkClass>({{LinkClass::nvlink, "nvlink"},
                                                               {LinkClass::pcie, "pcie"},
                                                               {LinkClass::infiniband, "infiniband"},
                                                               {LinkClass::ethernet, "ethernet"},
                                                               {LinkClass::ici, "ici"},
                                                               {LinkClass::wafer_mesh, "wafer_mesh"},
                                                               {LinkClass::fabric, "fabric"}});
const char* to_string(LinkClass c);
LinkClass parse_link_class(const std::string& name);  // throws std::invalid_argument
bool is_inter_node(LinkClass c);

enum class VertexKind { device, nic, switch_ };

struct Vertex {
  VertexKind kind;
  std::string name;
  std::string role;  // "gpu", "nvswitch", "leaf", "spine", "core plane", "nic", ...
  int node = -1;     // server the vertex belongs to, -1 for fabric switches
};

// A full-duplex link: each direction carries `bandwidth` independently.
struct Link {
  int a = -1, b = -1;    // vertex ids
  double bandwidth = 0;  // nominal bytes/s per direction
  double latency = 0;    // seconds
  LinkClass cls = LinkClass::fabric;
  double efficiency = 1;  // achieved / nominal, from the fabric calibration profile
  double effective_bandwidth() const { return bandwidth * efficiency; }
};

// One traversal of a link, in the a->b (forward) or b->a direction.
struct Hop {
  int link = -1;
  bool forward = true;
};
using Route = std::vector<Hop>;

class Router {
 public:
  virtual ~Router() = default;
  // Appends the hops from device vertex `src` to device vertex `dst` (src != dst). Families whose switches
  // reduce in the network (gpu_cluster: NVLink SHARP) also route between a device and such a switch
  // vertex; any other non-device end is a logic error.
  virtual void route(int src_vertex, int dst_vertex, Route& out) const = 0;
  virtual std::string describe() const = 0;
};

// The host side of a server: DRAM and local SSD (optional; parameter-server workloads need it). Zero
// means "not described". Bandwidths are what the part sustains (STREAM-like for DRAM, the datasheet's
// sequential rates and 4 KiB random-read IOPS for SSDs).
struct HostSpec {
  double memory_bytes = 0;         // host DRAM per server
  double memory_bandwidth = 0;     // bytes/s per server
  double ssd_bytes = 0;            // local SSD capacity per server
  double ssd_read_bandwidth = 0;   // bytes/s, sequential
  double ssd_write_bandwidth = 0;  // bytes/s, sequential
  double ssd_read_iops = 0;        // random 4 KiB reads per second
  double pcie_bandwidth = 0;       // bytes/s between host memory and one device (each on its own link)
  bool has_memory() const { return memory_bytes > 0 && memory_bandwidth > 0; }
  bool has_ssd() const { return ssd_bytes > 0 && ssd_read_bandwidth > 0 && ssd_read_iops > 0; }
};

class Topology {
 public:
  std::string name;
  std::string kind;  // "gpu_cluster", "torus", ...: the YAML name, for output only (decide with family<T>())
  std::string source_file;
  DeviceSpec device;
  calibration::DeviceProfile device_profile;  // how close kernels get to `device`'s peaks
  calibration::FabricProfile fabric_profile;  // how close collectives get to the links' bandwidth
  std::string fabric_profile_path;            // the file fabric_profile was read from (provenance)
  int nodes = 0;
  int devices_per_node = 0;
  // GPUs installed per server when the job uses fewer (gpu_cluster `node.devices_used`): only the used ones
  // are built, so devices_per_node and every device count are the job's. 0 = the job uses every GPU.
  int installed_devices_per_node = 0;
  HostSpec host;  // per server; empty unless the topology file describes it

  std::vector<Vertex> vertices;
  std::vector<Link> links;
  std::vector<int> device_vertex;  // device rank -> vertex id

  int add_vertex(Vertex v);
  int add_link(int a, int b, double bandwidth, double latency, LinkClass cls);

  int device_count() const { return static_cast<int>(device_vertex.size()); }
  // Device ranks [0, compute_devices) run the workload; ranks above are service endpoints that only send,
  // receive and reduce data (Cerebras MemoryX and SwarmX nodes), so that traffic to them is flows on the
  // topology. -1: every rank is a compute device.
  int compute_devices = -1;
  int compute_device_count() const { return compute_devices < 0 ? device_count() : compute_devices; }
  // The family's data if this topology is of family T (T one of FamilyData's structs), else null.
  template <class T>
  const T* family() const {
    const auto* data = std::get_if<std::shared_ptr<const T>>(&family_);
    return data ? data->get() : nullptr;
  }
  template <class T>
  void set_family(std::shared_ptr<const T> data) {
    family_ = std::move(data);
  }
  int node_of(int device) const { return vertices[device_vertex[device]].node; }
  const Router& router() const { return *router_; }
  void set_router(std::unique_ptr<Router> r) { router_ = std::move(r); }

  // Device ranks whose traffic leaves the node through the same NIC as `device` does (its "rail").
  // Workloads fold devices that are symmetric; traffic of devices sharing a rail must not be folded.
  std::vector<int> rail_peers(int device) const;
  // Rail (NIC index within the node) of a device, -1 if the topology has no NICs.
  int rail_of(int device) const;
  void set_rails(std::vector<int> rail_of_device) { rail_of_device_ = std::move(rail_of_device); }

  // Counts of vertices by role, for `topo describe`.
  std::map<std::string, int> role_counts() const;

  // Extra lines for `topo describe` that only the builder of a family knows (SU count, torus dims...).
  std::vector<std::pair<std::string, std::string>> facts;
  // Compute devices slower than the datasheet (`slowdown:`, `straggler:`); nominal by default.
  DeviceSpeed device_speed;

 private:
  std::shared_ptr<Router> router_;
  FamilyData family_;
  std::vector<int> rail_of_device_;
};

// True when `topo` is of family T (a predicate the workload registry can name).
template <class T>
bool is_family(const Topology& topo) {
  return topo.family<T>() != nullptr;
}

}  // namespace podsim::topology
