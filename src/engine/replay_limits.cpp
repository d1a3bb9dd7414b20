// The limits of a replay, checked before any work: the stack SimGrid needs for a platform and the largest
// communication phase SimGrid can hold (see docs/simgrid-notes.md).
#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "podsim/core/error.hpp"
#include "podsim/engine/replay.hpp"

namespace podsim::engine {

size_t simgrid_stack_bytes(long long hosts, long long links) {
  // Every SimGrid host and link is one LMM constraint; the platform adds the replay driver and SimGrid's
  // loopback link.
  long long constraints = hosts + links + 2;
  constexpr size_t kBytesPerConstraint =
      256;                             // 96 measured (x86-64, Debian 3.32), with room for other builds
  constexpr size_t kBase = 64u << 20;  // everything that is not the constraint walk
  return kBase + static_cast<size_t>(constraints) * kBytesPerConstraint;
}

void check_replayable(const topology::Topology& topo, const plan::TaskGraph& graph) {
  // A phase is one SimGrid parallel task, whose bytes are a dense hosts x hosts matrix (the 3.32 API has no
  // sparse form) that SimGrid scans whole twice when the task starts. Refuse, before forking, a phase whose
  // matrix alone would take more memory than a CI machine can spare.
  constexpr double kMaxMatrixBytes = 256.0 * 1048576;
  std::vector<int> seen(topo.vertices.size(), -1);  // per vertex: flows may end at a switch
  int stamp = 0;
  for (const auto& plan : graph.plans)
    for (const auto& phase : plan) {
      long long hosts = 0;
      ++stamp;
      for (const auto& f : phase.flows) {
        if (plan::moves_nothing(f)) continue;
        for (int v : {plan::source_vertex(topo, f), plan::target_vertex(topo, f)})
          if (seen[v] != stamp) seen[v] = stamp, hosts++;
      }
      double matrix = 8.0 * hosts * hosts;
      if (matrix > kMaxMatrixBytes)
        throw InputError(fmt::format(
            "one communication phase of this step moves {} flows among {} devices; SimGrid would need a "
            "{}x{} matrix ({:.0f} MiB) for it, more than podsim's limit of {:.0f} MiB per phase (about {} "
            "devices); use fewer data-parallel replicas (fewer topology.nodes, or more tensor or pipeline "
            "parallelism)",
            phase.flows.size(), hosts, hosts, hosts, matrix / 1048576, kMaxMatrixBytes / 1048576,
            static_cast<long long>(std::sqrt(kMaxMatrixBytes / 8))));
    }
}

}  // namespace podsim::engine
