#include "podsim/workload/ps/ps_collectives.hpp"

#include <algorithm>
#include <limits>
#include <set>

#include "podsim/network/collective_registry.hpp"
#include "podsim/network/link_load.hpp"

namespace podsim::workload {

AllReducePlan fastest_all_reduce(const topology::Topology& topo, const std::vector<int>& group,
                                 double bytes) {
  AllReducePlan best;
  double best_time = std::numeric_limits<double>::infinity();
  for (auto algorithm : network::algorithms_for(network::CollectiveKind::all_reduce)) {
    network::Collective c;
    c.kind = network::CollectiveKind::all_reduce;
    c.group = group;
    c.bytes = bytes;
    c.algorithm = algorithm;
    if (!network::algorithm_available(topo, c, algorithm)) continue;  // nvls: one NVLink domain only
    auto plan = network::plan_collective(topo, c);
    double t = network::idle_plan_time(topo, plan);
    if (t < best_time) best_time = t, best = {std::move(plan), algorithm};
  }
  return best;
}

plan::CommPlan all_to_all(const topology::Topology& topo, const std::vector<int>& group,
                          double bytes_per_rank, int max_shifts) {
  const int n = static_cast<int>(group.size());
  if (n < 2 || bytes_per_rank <= 0) return {};
  if (n - 1 <= max_shifts) {
    network::Collective c;
    c.kind = network::CollectiveKind::all_to_all;
    c.group = group;
    c.bytes = bytes_per_rank;
    return network::plan_collective(topo, c);
  }
  std::set<int> shifts;
  for (int j = 0; j < max_shifts; ++j)
    shifts.insert(1 + static_cast<int>((static_cast<long long>(j) * (n - 1)) / max_shifts));
  const double per_flow = bytes_per_rank * (n - 1) / n / shifts.size();
  plan::CommPhase phase;
  double max_step = 0;
  for (int s : shifts)
    for (int i = 0; i < n; ++i) {
      int src = group[i], dst = group[(i + s) % n];
      phase.flows.push_back({src, dst, per_flow});
      if (i == 0) max_step = std::max(max_step, network::step_latency(topo, src, dst));
    }
  phase.latency = topo.fabric_profile.launch_latency + max_step;
  return {phase};
}

}  // namespace podsim::workload
