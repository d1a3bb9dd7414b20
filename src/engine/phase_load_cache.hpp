// Private to the engine. The closed-form load of each phase of the graph (plan::phase_load), computed once
// per phase rather than once per task that runs it: a Megatron step runs the same few plans thousands of
// times, and routing every flow again was a third of a 100k-GPU replay (docs/scale.md). Bounded: phases
// beyond a budget of cached link directions are computed each time, as before.
#pragma once

#include <vector>

#include "podsim/plan/phase_cost.hpp"
#include "podsim/plan/task_graph.hpp"

namespace podsim::engine {

class PhaseLoadCache {
 public:
  PhaseLoadCache(const topology::Topology& topo, const plan::TaskGraph& graph) : topo_(topo), graph_(graph) {
    cached_.resize(graph.plans.size());
    for (size_t p = 0; p < graph.plans.size(); ++p) cached_[p].resize(graph.plans[p].size());
  }

  // Phase k of plan p; the same value phase_load returns.
  const plan::PhaseLoad& get(int p, int k) {
    Entry& e = cached_[p][k];
    if (e.ready) return e.load;
    plan::PhaseLoad load = plan::phase_load(topo_, graph_.plans[p][k], scratch_);
    if (budget_ < load.link_dirs.size()) {
      fresh_ = std::move(load);
      return fresh_;
    }
    budget_ -= load.link_dirs.size();
    e.load = std::move(load);
    e.ready = true;
    return e.load;
  }

 private:
  struct Entry {
    plan::PhaseLoad load;
    bool ready = false;
  };
  const topology::Topology& topo_;
  const plan::TaskGraph& graph_;
  std::vector<std::vector<Entry>> cached_;
  plan::PhaseLoad fresh_;
  plan::PhaseLoadScratch scratch_;
  size_t budget_ = size_t{16} << 20;  // link directions cached in all (64 MiB)
};

}  // namespace podsim::engine
