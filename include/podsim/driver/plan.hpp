// The `podsim plan` use case: load the topology and workload (with --set), read the search space, run the
// branch and bound, write plan.csv. `podsim plan` (cli/plan_command.cpp) declares the options and prints.
#pragma once

#include <string>
#include <vector>

#include "podsim/driver/plan_search.hpp"
#include "podsim/driver/plan_space.hpp"

namespace podsim::driver {

struct PlanRequest {
  std::string topology_file, workload_file;
  std::vector<std::string> sets;  // "topology.nodes=128", "workload.parallel.tp=8" (fixes that key)
  bool as_written = false;        // keys the file states as scalars stay fixed (default: searched)
  PlanOptions options;            // top (>= 1), jobs (0: one per core), progress
  std::string out;                // directory for plan.csv; empty: none written
  // "I/N": simulate shard I of N and write DIR/plan.shard-I-of-N.json (plan_shards.hpp) instead of
  // plan.csv; empty: SLURM_ARRAY_TASK_ID/COUNT when set, else the whole search.
  std::string shard;
  // Continue an interrupted search in `out`: the candidates its journal holds (plan_journal.hpp) are not
  // simulated again. Without it, a journal left in `out` is an InputError.
  bool resume = false;
};

struct PlanRun {
  Space space;
  PlanResult result;
  std::vector<std::string> written;  // files in `out`
  std::string title;                 // "<workload> on <topology>"
  int top = 20;                      // the N best that are exact (the request's --top)
};

// Bad input (a missing file, --top 0, a list on a key that cannot be searched, a workload that is not a
// transformer_lm on a GPU cluster) throws InputError before anything is simulated.
PlanRun run_plan(const PlanRequest& request);

// The topology and the search space of a request, checked as run_plan checks them (nothing simulated).
// `topo` must outlive the space's use.
Space load_plan_space(const PlanRequest& request, topology::Topology& topo);

// `tp: auto`, `pp: [4, 8]`, ... in a workload file given to `podsim run`: when the file (overrides applied)
// searches a key only the plan can expand (needs_search), runs the plan's branch and bound for its one
// best candidate (keys stated as scalars stay fixed) and returns the overrides that pin every searched key
// (and the schedule) to it, appended to `workload_sets`; otherwise returns `workload_sets` unchanged.
// InputError when no combination divides and fits.
Overrides pin_searched_keys(const std::string& workload_file, const Overrides& workload_sets,
                            const topology::Topology& topo);

}  // namespace podsim::driver
