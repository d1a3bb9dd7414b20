// Private to the engine (the only layer that sees SimGrid): not installed under include/.
// The SimGrid platform for one replay: a host per flow end (a device, or a switch that reduces in the
// network) that appears in the task graph's flows and a
// pair of links (one per direction) per topology link on their routes. Routes come from the topology's
// router through a custom routing zone, so SimGrid never needs an n^2 routing table; only the part of the
// machine the folded task graph touches is instantiated.
#pragma once

#include <vector>

#include "podsim/plan/task_graph.hpp"
#include "podsim/topology/topology.hpp"
#include "virtual_routes.hpp"

namespace simgrid::s4u {
class Host;
class Link;
}  // namespace simgrid::s4u

namespace podsim::engine {

struct Platform {
  std::vector<simgrid::s4u::Host*> vertex_host;  // topology vertex -> host (nullptr when no flow ends there)
  simgrid::s4u::Host* driver = nullptr;          // runs the replay actor; no flow starts or ends there
  int hosts = 0, links = 0;
  // Hosts that are no device: the sparse hand-off (sparse_handoff.hpp) routes its parallel tasks between
  // them through `virtual_routes` (owned by the routing zone, like the hosts by the engine).
  std::vector<simgrid::s4u::Host*> spare_hosts;
  VirtualRoutes* virtual_routes = nullptr;
  std::vector<simgrid::s4u::Link*> link_dir;  // link * 2 + (forward ? 0 : 1) -> SimGrid link (or nullptr)
};

// The part of the topology the graph's flows touch: what build_platform instantiates.
struct PlatformUse {
  std::vector<char> vertex;    // topology vertex -> a flow starts or ends there
  std::vector<char> link_dir;  // link * 2 + (forward ? 0 : 1) -> used
  long long hosts = 0, link_dirs = 0;
  long long spare_hosts = 0;  // hosts to add for the sparse hand-off (set by the caller)
};
PlatformUse platform_use(const topology::Topology& topo, const plan::TaskGraph& graph);

// Must be called once, in a process whose SimGrid engine is configured for ptask_L07 and has no zone yet.
Platform build_platform(const topology::Topology& topo, const PlatformUse& use);

}  // namespace podsim::engine
