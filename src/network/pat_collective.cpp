// PAT (Parallel Aggregated Trees) all_gather and reduce_scatter as NCCL runs them since 2.23 with one rank
// per server (NCCL_ALGO=PAT; Jeaugey, "PAT: a new algorithm for all-gather and reduce-scatter operations at
// scale", arXiv 2506.20252). A Bruck algorithm with its dimensions reversed: log2(n) network steps, the
// step at distance 2^j moving 2^(K-1-j) blocks of S/n, so the most data goes to the nearest ranks and
// the farthest get one block. Every rank still sends (n-1)/n of the buffer, as on a ring, but in a
// logarithmic number of steps: PAT wins at small sizes and scale, where the ring's n-1 steps dominate.
// Its bounded internal buffers cost bandwidth at large sizes (more, smaller steps): the profile's pat
// bandwidth factor, so `auto` keeps rings there. Pipelined in one phase.
#include <fmt/format.h>

#include <cmath>

#include "collective_planners.hpp"
#include "podsim/core/error.hpp"

namespace podsim::network {

using topology::Topology;

bool pat_available(const Topology& topo, const Collective& c) {
  if (c.group.size() < 2 || !topo.fabric_profile.protocol("pat", "simple")) return false;
  for (const auto& members : members_by_node(topo, c.group))
    if (members.size() != 1) return false;  // NCCL runs PAT with one rank per server only
  return true;
}

plan::CommPlan plan_pat(const Topology& topo, const Collective& c) {
  if (!pat_available(topo, c))
    throw InputError(fmt::format(
        "algorithm pat (all_gather, reduce_scatter) needs one rank per server and a fabric profile with "
        "`protocols: pat:`; {} does not offer that for this group of {} ranks (use --per-node 1)",
        topo.name, c.group.size()));
  const int n = static_cast<int>(c.group.size());
  const int steps = static_cast<int>(std::ceil(std::log2(n)));
  auto terms = protocol_terms(topo, "pat", Protocol::simple, steps, steps);
  // Blocks per step before they are scaled to the (n-1) blocks every rank sends in all.
  double blocks = 0;
  for (int j = 0; j < steps; ++j) blocks += std::ldexp(1.0, steps - 1 - j);
  const double block = c.bytes / n * (n - 1) / blocks * terms.byte_scale;
  plan::CommPhase phase;
  for (int j = 0; j < steps; ++j) {
    const int distance = 1 << j;
    const double bytes = block * std::ldexp(1.0, steps - 1 - j);
    for (int r = 0; r < n; ++r) {
      // reduce_scatter runs these steps in reverse (r -> r - distance), which loads full-duplex links alike.
      int to = (r + distance) % n;
      if (to != r) phase.flows.push_back({c.group[r], c.group[to], bytes});
    }
  }
  phase.latency = terms.latency;
  return {phase};
}

}  // namespace podsim::network
