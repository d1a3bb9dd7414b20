#include "podsim/report/link_class_bytes.hpp"

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
  for_each_routed_hop(topo, graph, [&](size_t p, int, const topology::Hop& hop, double b) {
    out.bytes[p][column[static_cast<size_t>(topo.links[hop.link].cls)]] += b;
  });
  return out;
}

}  // namespace podsim::report
