#include "podsim/report/link_class_bytes.hpp"

#include <unordered_map>

#include "podsim/report/link_traffic.hpp"

namespace podsim::report {

PlanClassBytes plan_class_bytes(const topology::Topology& topo, const plan::TaskGraph& graph) {
  const size_t all = topology::kLinkClassNames.entries.size();
  std::vector<int> column(all, -1);  // LinkClass -> index in PlanClassBytes::classes
  PlanClassBytes out;
  for (const auto& link : topo.links) {
    auto c = static_cast<size_t>(link.cls);
    if (column[c] < 0) column[c] = 0;
  }
  for (size_t c = 0; c < all; ++c) {
    if (column[c] < 0) continue;
    column[c] = static_cast<int>(out.classes.size());
    out.classes.push_back(topology::to_string(static_cast<topology::LinkClass>(c)));
  }
  out.capacity.assign(out.classes.size(), 0.0);
  for (const auto& link : topo.links)
    out.capacity[column[static_cast<size_t>(link.cls)]] += 2 * link.bandwidth;

  out.bytes.assign(graph.plans.size(), std::vector<double>(out.classes.size(), 0.0));
  std::vector<int> runs = plan_run_counts(graph);
  // A phase's flows between the same two vertices are routed once, as link_traffic does.
  std::unordered_map<long long, double> pairs;
  topology::Route route;
  const long long vertices = static_cast<long long>(topo.vertices.size());
  for (size_t p = 0; p < graph.plans.size(); ++p) {
    if (runs[p] == 0) continue;
    for (const auto& phase : graph.plans[p]) {
      pairs.clear();
      for (const auto& f : phase.flows) {
        if (plan::moves_nothing(f)) continue;
        pairs[plan::source_vertex(topo, f) * vertices + plan::target_vertex(topo, f)] += f.bytes;
      }
      for (const auto& [pair, b] : pairs) {
        route.clear();
        topo.router().route(static_cast<int>(pair / vertices), static_cast<int>(pair % vertices), route);
        for (const auto& hop : route)
          out.bytes[p][column[static_cast<size_t>(topo.links[hop.link].cls)]] += b;
      }
    }
  }
  return out;
}

}  // namespace podsim::report
