#include "podsim/report/link_classes.hpp"

#include <set>

namespace podsim::report {

namespace {

constexpr size_t kRoutedPerPhase = 8;

void add_route_classes(const topology::Topology& topo, const plan::Flow& f, std::set<int>& classes,
                       topology::Route& route) {
  // Flow ends by topology vertex, as the engine routes them: an NVLS flow ends at an NVSwitch.
  if (plan::moves_nothing(f)) return;
  route.clear();
  topo.router().route(plan::source_vertex(topo, f), plan::target_vertex(topo, f), route);
  for (const auto& hop : route) classes.insert(static_cast<int>(topo.links[hop.link].cls));
}

}  // namespace

std::vector<std::string> plan_link_classes(const topology::Topology& topo, const plan::TaskGraph& graph) {
  std::vector<std::string> out;
  out.reserve(graph.plans.size());
  topology::Route route;
  for (const auto& plan : graph.plans) {
    std::set<int> classes;
    for (const auto& phase : plan) {
      for (size_t i = 0; i < phase.flows.size() && i < kRoutedPerPhase; ++i)
        add_route_classes(topo, phase.flows[i], classes, route);
      if (!phase.flows.empty()) add_route_classes(topo, phase.flows.back(), classes, route);
    }
    std::string joined;
    for (int c : classes)
      joined +=
          (joined.empty() ? "" : "+") + std::string(topology::to_string(static_cast<topology::LinkClass>(c)));
    out.push_back(joined);
  }
  return out;
}

}  // namespace podsim::report
