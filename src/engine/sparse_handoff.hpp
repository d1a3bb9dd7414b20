// Private to the engine. Hands a communication phase to SimGrid as a parallel task over a few spare hosts
// instead of over its n devices, so the hand-off costs O(flows x hops), not O(n^2) (virtual_routes.hpp
// says why the task is the same LMM variable). Exactness: each link's coefficient is summed in the order
// L07 would sum it from the dense matrix (pairs by host index, flows of a pair in phase order), so SimGrid
// gets bit-identical coefficients; ReplayOptions::sparse_handoff (PODSIM_DENSE_HANDOFF=1) restores the
// dense matrix for cross-checks. A step starts the same few phases thousands of times: each phase's pairs,
// routes and (for a whole phase) coefficients are kept after its first hand-off, within a budget.
#pragma once

#include <algorithm>
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

  // Phase k of plan p (graph.plans[p][k]) with its flows scaled by `share` as one started SimGrid parallel
  // task on spare hosts, owned by flight `flight` until release(flight); null when too few spare hosts are
  // free (the caller then falls back to the dense task). The caller adopts the returned reference
  // (ExecPtr(exec, false)).
  simgrid::s4u::Exec* start(int flight, int p, int k, double share);
  void release(int flight);

 private:
  // A phase's host pairs in the dense matrix's row-major order, each with its flows' bytes (phase order,
  // unscaled) and the link directions of its route; `whole`: the coefficients at share 1, first use first.
  struct PhaseRoutes {
    std::vector<int> first_flow{0}, first_dir{0};  // per pair, into flow_bytes and dirs
    std::vector<double> flow_bytes;
    std::vector<int> dirs;
    std::vector<int> whole_dirs;
    std::vector<double> whole_coefficients;
    bool ready = false, whole_ready = false;
    size_t size() const { return flow_bytes.size() + dirs.size() + whole_dirs.size(); }
  };
  PhaseRoutes& routes_of(int p, int k);
  static PhaseRoutes build_routes(const topology::Topology& topo, const plan::CommPhase& phase);
  void sum_link_coefficients(const PhaseRoutes& routes, double share);

  const topology::Topology& topo_;
  const plan::TaskGraph& graph_;
  const Platform& platform_;
  std::vector<int> free_;                            // indices into platform_.spare_hosts
  std::unordered_map<int, std::vector<int>> taken_;  // flight -> its spare hosts
  std::vector<std::vector<PhaseRoutes>> routes_;     // per plan and phase, once built
  PhaseRoutes fresh_;                                // a phase built beyond the budget
  size_t budget_ = size_t{16} << 20;                 // pair bytes and link directions kept in all
  std::vector<double> coefficient_;                  // per link direction (all zero between calls)
  std::vector<int> used_dirs_;
  std::vector<int> representative_;  // link direction -> first of its duplicate class (link_classes.hpp)
  std::vector<double> class_coefficient_;  // per representative: its coefficient in this hand-off, or 0
};

// Spare hosts a platform gets for the sparse hand-off, for a platform of `hosts` used hosts. A run holds a
// few dozen hand-offs at once at most (56 across the validation tables and a 405B run on 16,384 GPUs), each
// on a few hosts (a phase of k coefficient classes takes the smallest m with m(m-1) >= k); should the pool
// run out, a phase falls back to the dense task over its own hosts, cheap on a platform of few hosts. So the
// pool grows with the platform, from 256 to 4096: SimGrid takes about 3 us to create and destroy a host, and
// a fixed 4096 was 13% of a 64-GPU simulation (most of a `podsim plan` worker's time is such simulations).
constexpr long long spare_hosts_for(long long hosts) {
  return std::clamp(hosts, 256LL, 4096LL);
}

}  // namespace podsim::engine
