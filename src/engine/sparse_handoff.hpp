// Private to the engine. Hands a communication phase to SimGrid as a parallel task over a few spare hosts
// instead of over its n devices, so the hand-off costs O(flows x hops), not O(n^2) (virtual_routes.hpp
// says why the task is the same LMM variable). Exactness: each link's coefficient is summed in the order
// L07 would sum it from the dense matrix (pairs by host index, flows of a pair in phase order), so SimGrid
// gets bit-identical coefficients; ReplayOptions::sparse_handoff (PODSIM_DENSE_HANDOFF=1) restores the
// dense matrix for cross-checks.
#pragma once

#include <unordered_map>
#include <vector>

#include "platform.hpp"
#include "podsim/plan/flow.hpp"
#include "podsim/plan/task_graph.hpp"
#include "podsim/topology/topology.hpp"

namespace simgrid::s4u {
class Exec;
}

namespace podsim::engine {

class SparseHandoff {
 public:
  SparseHandoff(const topology::Topology& topo, const plan::TaskGraph& graph, const Platform& platform);

  // The phase's flows scaled by `share` as one started SimGrid parallel task on spare hosts, owned by
  // flight `flight` until release(flight); null when too few spare hosts are free (the caller then falls
  // back to the dense task). The caller adopts the returned reference (ExecPtr(exec, false)).
  simgrid::s4u::Exec* start(int flight, const plan::CommPhase& phase, double share);
  void release(int flight);

 private:
  void sum_link_coefficients(const plan::CommPhase& phase, double share);

  const topology::Topology& topo_;
  const Platform& platform_;
  std::vector<int> free_;                             // indices into platform_.spare_hosts
  std::unordered_map<int, std::vector<int>> taken_;   // flight -> its spare hosts
  std::unordered_map<int, int> index_;                // device -> host index in the dense order
  std::unordered_map<long long, double> pair_bytes_;  // src index * n + dst index -> bytes
  std::vector<double> coefficient_;                   // per link direction (all zero between calls)
  std::vector<int> used_dirs_;
  std::vector<int> representative_;  // link direction -> first of its duplicate class (link_classes.hpp)
  std::vector<double> class_coefficient_;  // per representative: its coefficient in this hand-off, or 0 //
                                           // link directions with a coefficient, first use first
  topology::Route route_;
};

// Spare hosts a platform gets for the sparse hand-off: enough for many concurrent hand-offs of a few
// coefficient classes each (a phase of k classes takes the smallest m with m(m-1) >= k).
constexpr long long kSpareHosts = 4096;

}  // namespace podsim::engine
