// Replays a task graph in SimGrid and returns when every task started and ended.
//
// Design (see docs/simgrid-notes.md for the measured facts behind it):
// - Network: SimGrid's ptask_L07 model (max-min fair sharing, exact transfer times). Each communication
//   phase is one parallel task holding all of its flows, so the flows of a ring progress in lockstep at
//   the rate of its most loaded link, and share links with every other phase in flight (tensor-parallel
//   rings on NVSwitch ports, pipeline transfers and gradient rings on the InfiniBand rails).
// - A phase alone on its links runs in closed form (exactly what L07 computes for it alone) until another
//   phase needs one of its links; then it is handed to SimGrid with the bytes it has left, so every
//   contention is still arbitrated by SimGrid (Replayer in replay.cpp; PODSIM_ALWAYS_SIMGRID=1 disables it).
// - Device time (kernels, software latency) is not a network resource: the representative device of a
//   stream runs one task at a time, so it is a timer in the replay actor rather than a SimGrid Exec.
// - SimGrid 3.32 allows one engine per process, so each replay runs in a forked child process that sends
//   its results back through a pipe. The parent never initializes SimGrid and can replay many graphs.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "podsim/plan/task_graph.hpp"
#include "podsim/topology/topology.hpp"

namespace podsim::engine {

struct TaskTimes {
  double start = 0;        // dependencies met, device busy from here
  double compute_end = 0;  // device time done, communication starts
  double end = 0;          // all phases done
};

struct ReplayOptions {
  // Run a phase in closed form while it is alone on its links (exactly SimGrid's result for it) and hand it
  // to SimGrid when another phase needs one of its links. Off: every phase goes through SimGrid (slower;
  // for cross-checking). The environment variable PODSIM_ALWAYS_SIMGRID=1 turns it off too.
  bool closed_form_when_alone = true;
  // Hand a phase to SimGrid through spare hosts whose routes carry its per-link bytes (O(flows x hops))
  // rather than as the dense devices x devices matrix (O(devices^2) time and memory); bit-identical
  // results (engine/sparse_handoff.hpp). PODSIM_DENSE_HANDOFF=1 turns it off (and the matrix limit on).
  bool sparse_handoff = true;
};

// Options from the environment (PODSIM_ALWAYS_SIMGRID, PODSIM_DENSE_HANDOFF).
ReplayOptions default_replay_options();

struct ReplayResult {
  double makespan = 0;               // simulated seconds from the first task to the last
  std::vector<TaskTimes> tasks;      // indexed like TaskGraph::tasks
  long long simgrid_activities = 0;  // parallel tasks SimGrid simulated
  long long closed_form_phases = 0;  // phases that started alone on their links
  long long handed_over_phases = 0;  // of those, phases handed to SimGrid when contention began
  int hosts = 0, links = 0;          // platform actually instantiated (only what the graph touches)
};

// Throws InputError (exit 2, with what to change) for a graph that SimGrid cannot replay in reasonable
// memory: a phase among so many devices that its dense parallel-task matrix exceeds 256 MiB. Only checked
// when the dense hand-off is on (ReplayOptions::sparse_handoff false).
void check_replayable(const topology::Topology& topo, const plan::TaskGraph& graph);

// Runs in a forked child after check_replayable; throws std::runtime_error when the simulation fails.
ReplayResult replay(const topology::Topology& topo, const plan::TaskGraph& graph,
                    const ReplayOptions& options = default_replay_options());

// Stack given to the thread that runs SimGrid and to the replay actor for a platform of `hosts` hosts and
// `links` links: SimGrid 3.32 walks the constraint graph recursively, one frame per constraint, so the
// stack grows with the platform (see replay.cpp).
size_t simgrid_stack_bytes(long long hosts, long long links);

// Runs in this process (SimGrid can then not be used again here), on a thread with simgrid_stack_bytes()
// of stack. For the child side and for tools.
ReplayResult replay_in_process(const topology::Topology& topo, const plan::TaskGraph& graph,
                               const ReplayOptions& options = default_replay_options());

}  // namespace podsim::engine
