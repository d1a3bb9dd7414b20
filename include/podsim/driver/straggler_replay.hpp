// A step on a cluster whose devices are not all equally fast (topology `slowdown:` / `straggler:`).
//
// podsim folds the data-parallel replicas of a transformer job into one representative. With slow devices
// the replicas differ, so they are told apart by pattern: a replica's speed per pipeline stage is its
// slowest device in that stage (tensor- and context-parallel ranks wait for each other every layer), and
// replicas that synchronise every layer (an expert-parallel group wider than tp x cp) share their slowest
// pattern. Each distinct pattern that no other is slower than everywhere is replayed, with the whole job's
// traffic as before; the step is the slowest of them, since every stage's data-parallel reduction waits for
// its slowest replica. Replicas with the same pattern stay folded. Assumption, said in the notes: the
// other replicas' traffic runs in lockstep with the gating one (theirs would run a little earlier), so
// contention is, if anything, overstated.
#pragma once

#include <optional>

#include "podsim/engine/replay.hpp"
#include "podsim/report/straggler_outcome.hpp"
#include "podsim/topology/topology.hpp"
#include "podsim/workload/step_plan.hpp"

namespace podsim::driver {

struct StragglerReplay {
  engine::ReplayResult replay;  // of the gating pattern
  plan::TaskGraph graph;        // the plan's graph with the gating pattern's lanes slowed
  report::StragglerOutcome outcome;
};

// Most patterns replayed per step; beyond it the slowest ones by total stage time are, and the step is
// a lower bound (said in the outcome and the notes).
inline constexpr int kMaxStragglerPatterns = 16;

// InputError when the topology has slow devices and the plan's kind does not say how its devices map to
// replicas (called before the balanced replay, so that the error comes at once).
void require_replica_layout(const topology::Topology& topo, const workload::StepPlan& plan);

// Nothing when every device of the topology is nominal. `balanced` is the plan's replay at full speed.
std::optional<StragglerReplay> replay_stragglers(const topology::Topology& topo,
                                                 const workload::StepPlan& plan,
                                                 const engine::ReplayResult& balanced);

// One line for the run's notes and summary.
std::string straggler_note(const report::StragglerOutcome& o);

}  // namespace podsim::driver
