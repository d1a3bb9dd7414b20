#include "platform.hpp"

#include <fmt/format.h>

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u.hpp>
#include <unordered_set>

namespace podsim::engine {
namespace {

namespace sg4 = simgrid::s4u;
namespace kr = simgrid::kernel::routing;

// Routing zone that asks podsim's router. Depends on SimGrid kernel headers (stable in 3.32; the
// equivalent in 4.x is a NetZoneImpl subclass too).
class TopologyZone final : public kr::NetZoneImpl {
 public:
  TopologyZone(const topology::Topology& topo) : NetZoneImpl("podsim"), topo_(topo) {}

  void get_local_route(const kr::NetPoint* src, const kr::NetPoint* dst, kr::Route* into,
                       double* latency) override {
    if (const auto* links = virtual_.find(src->id(), dst->id())) {  // between spare hosts
      for (sg4::Link* link : *links) {
        into->link_list_.push_back(link->get_impl());
        if (latency) *latency += link->get_latency();
      }
      return;
    }
    route_.clear();
    topo_.router().route(netpoint_vertex_.at(src->id()), netpoint_vertex_.at(dst->id()), route_);
    for (const auto& hop : route_) {
      sg4::Link* link = (hop.forward ? forward_ : backward_).at(hop.link);
      into->link_list_.push_back(link->get_impl());
      if (latency) *latency += link->get_latency();
    }
  }

  const topology::Topology& topo_;
  std::vector<int> netpoint_vertex_;            // netpoint id -> topology vertex (a device or a switch)
  std::vector<sg4::Link*> forward_, backward_;  // topology link -> SimGrid link per direction
  topology::Route route_;
  VirtualRoutes virtual_;
};

}  // namespace

PlatformUse platform_use(const topology::Topology& topo, const plan::TaskGraph& graph) {
  PlatformUse use;
  std::vector<char>& used_vertex = use.vertex;
  std::vector<char>& used_link = use.link_dir;
  const long long vertices = static_cast<long long>(topo.vertices.size());
  used_vertex.assign(vertices, 0);
  used_link.assign(topo.links.size() * 2, 0);
  std::unordered_set<long long> pairs;
  topology::Route route;
  for (const auto& plan : graph.plans)
    for (const auto& phase : plan)
      for (const auto& f : phase.flows) {
        int src = plan::source_vertex(topo, f), dst = plan::target_vertex(topo, f);
        if (src == dst || !pairs.insert(src * vertices + dst).second) continue;
        used_vertex[src] = used_vertex[dst] = 1;
        route.clear();
        topo.router().route(src, dst, route);
        for (const auto& hop : route) used_link[hop.link * 2 + (hop.forward ? 0 : 1)] = 1;
      }
  for (char u : used_vertex) use.hosts += u;
  for (char u : used_link) use.link_dirs += u;
  return use;
}

Platform build_platform(const topology::Topology& topo, const PlatformUse& use) {
  const std::vector<char>& used_vertex = use.vertex;
  const std::vector<char>& used_link = use.link_dir;

  auto* zone = new TopologyZone(topo);  // owned by the SimGrid engine once created
  sg4::NetZone* iface = zone->get_iface();
  Platform platform;
  platform.vertex_host.assign(topo.vertices.size(), nullptr);
  for (size_t v = 0; v < topo.vertices.size(); ++v) {
    if (!used_vertex[v]) continue;
    platform.vertex_host[v] = iface->create_host(fmt::format("v{}", v), 1e9);
    size_t id = platform.vertex_host[v]->get_netpoint()->id();
    if (zone->netpoint_vertex_.size() <= id) zone->netpoint_vertex_.resize(id + 1, -1);
    zone->netpoint_vertex_[id] = static_cast<int>(v);
    platform.hosts++;
  }
  // The replay actor needs a host even when the graph moves no data (a pure schedule).
  platform.driver = iface->create_host("replay-driver", 1e9);
  zone->forward_.assign(topo.links.size(), nullptr);
  zone->backward_.assign(topo.links.size(), nullptr);
  for (size_t l = 0; l < topo.links.size(); ++l)
    for (int dir = 0; dir < 2; ++dir) {
      if (!used_link[l * 2 + dir]) continue;
      const auto& link = topo.links[l];
      sg4::Link* sl =
          iface->create_link(fmt::format("l{}{}", l, dir ? 'b' : 'f'), link.effective_bandwidth());
      // No latency here: the replay adds each phase's route latency itself (once, also for a phase handed to
      // SimGrid halfway), so SimGrid only shares bandwidth.
      sl->set_latency(0);
      sl->seal();
      (dir ? zone->backward_ : zone->forward_)[l] = sl;
      platform.links++;
    }
  for (long long s = 0; s < use.spare_hosts; ++s)
    platform.spare_hosts.push_back(iface->create_host(fmt::format("spare{}", s), 1e9));
  platform.virtual_routes = &zone->virtual_;
  platform.link_dir.assign(topo.links.size() * 2, nullptr);
  for (size_t l = 0; l < topo.links.size(); ++l)
    platform.link_dir[l * 2] = zone->forward_[l], platform.link_dir[l * 2 + 1] = zone->backward_[l];
  iface->seal();
  return platform;
}

}  // namespace podsim::engine
