// `podsim plan`: every combination of the search space (plan_space.hpp) that divides and fits, ranked by
// a lower bound on its step time (plan_bound.hpp); candidates are simulated, contention-aware, in lower-
// bound order, in parallel worker processes, until no candidate left can beat the k-th best simulated
// step time (branch and bound). The k best are then exactly the k best of the space. With `distinct`
// keys the ranking is of groups (candidates alike in those keys, each group at its best candidate), and
// the bound prunes against the k-th best group: the k best groups and their best candidates are exact.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "podsim/driver/plan_bound.hpp"
#include "podsim/driver/plan_space.hpp"
#include "podsim/topology/topology.hpp"
#include "podsim/workload/step_plan.hpp"

namespace podsim::driver {

// A simulated candidate, as its worker process reports it.
struct SimOutcome {
  std::string status = {};  // "ok", an infeasible status, or "failed"
  std::string detail = {};
  double step_time = 0, tokens_per_s = 0, mfu = 0, memory = 0;
  std::array<double, workload::kCategories> breakdown{};  // mean over stages, seconds
  double bubble = 0;                                      // mean idle time
  std::string description = {};
  std::vector<std::string> hints = {};  // what the user could change (StepPlan::hints)
  bool ok() const { return status == "ok"; }
};

struct PlanOptions {
  int top = 20;             // k: the best k are exact
  int jobs = 1;             // worker processes simulating at once
  bool exhaustive = false;  // simulate every candidate that fits (for testing the bound)
  std::function<void(const std::string&)> progress;  // one line per simulated candidate (stderr)
  // Shard `shard` of `shards` (a Slurm array task): only the candidates whose index in lower-bound order
  // is shard mod shards, with a branch and bound of their own. The union of every shard's simulated rows
  // holds the k best of the space: a row a shard left out has a bound no better than that shard's k-th
  // best, which is no better than the k-th best of all (plan_shards.hpp merges them).
  int shard = 0, shards = 1;
  // Short key names ("tp", "micro_batch"; "layout" for the parallel layout's keys, kLayoutKeys): rank the k
  // best distinct settings of these keys, each at its best setting of the others. Empty: every candidate.
  std::vector<std::string> distinct = {};
  // Outcomes known before the search (an interrupted run's journal, plan_journal.hpp), by candidate label:
  // a candidate `recall` answers for is not simulated again. `on_simulated` hears each one simulated here.
  std::function<const SimOutcome*(const std::string& label)> recall = {};
  std::function<void(const std::string& label, const SimOutcome&)> on_simulated = {};
};

// What "layout" stands for in PlanOptions::distinct: the degrees of parallelism and the micro-batch.
inline const std::vector<std::string> kLayoutKeys = {
    "tp", "cp", "pp", "dp", "ep", "etp", "virtual_stages", "micro_batch"};

// The indices in space.keys of PlanOptions::distinct's names (every key when empty); InputError for a
// name that is not a searchable key, listing those that are.
std::vector<size_t> distinct_key_indices(const Space& space, const std::vector<std::string>& names);

struct PlanRow {
  CandidateValues values;  // per key of the space
  CandidateEstimate estimate;
  // Out of line: a search keeps every candidate that fits (a million for a MoE space) and simulates a
  // few thousand; inline, the outcomes' strings and breakdowns doubled the rows' memory, and the search
  // forks its workers from that process. Read it with sim().
  std::shared_ptr<const SimOutcome> outcome = nullptr;

  bool simulated() const { return outcome != nullptr; }
  // The simulation's outcome; an empty one (status "", not ok()) for a row not simulated.
  const SimOutcome& sim() const;
  void set_sim(SimOutcome o) { outcome = std::make_shared<const SimOutcome>(std::move(o)); }
};

struct PlanResult {
  std::vector<PlanRow> rows;  // candidates that fit: simulated ones by step time, then by lower bound
  SkipCounts skipped;         // reason -> combinations (out of memory included)
  long long enumerated = 0;   // combinations that divide
  long long simulated = 0;
  long long recalled = 0;        // of the simulated: outcomes recalled from an interrupted run's journal
  double seconds = 0;            // wall time of the search
  std::vector<size_t> distinct;  // the keys (indices in Space::keys) that tell groups apart
  int ranked() const;            // rows simulated successfully (they come first)
  // The ranked rows that are the best of their group, in rank order (every ranked row without --distinct).
  std::vector<size_t> group_bests() const;
};

PlanResult run_plan(const topology::Topology& topo, const Space& space, const PlanOptions& options);

// Rows by lower bound, equal bounds in their present order.
void order_by_lower_bound(std::vector<PlanRow>& rows);

// The order of plan.csv: simulated candidates that ran by step time, then the rest by lower bound, ties in
// their present order. Both sort through an index (a search holds a million rows or more, and a stable
// sort's buffer would be a second copy of them).
void rank_rows(std::vector<PlanRow>& rows);

// Simulates one candidate in this process (the worker's body).
SimOutcome simulate_candidate(const topology::Topology& topo, const workload::WorkloadConfig& w);

// "compute" or the largest cost beside it ("bubble", "tp", "dp", ...) and its share of the step.
std::string bound_by(const SimOutcome& s);

}  // namespace podsim::driver
