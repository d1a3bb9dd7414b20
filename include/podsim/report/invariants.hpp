// What every simulated step must satisfy to be physically possible and self-consistent, checked on every
// run (driver::simulate calls these for every candidate it replays and for the result it reports). A result
// that breaks one is a bug in podsim, never an answer, so there is deliberately no way to turn the checks
// off: a violation throws podsim::InvariantViolation naming the invariant, the numbers and the settings.
//
// The invariants (each has a short name that the message starts with):
//   finite            every number finite and non-negative (times, FLOPs, memory, breakdown)
//   devices           0 < devices used <= compute devices of the topology
//   peak              the per-device peak is the datasheet peak of the precision in use
//   flops             model FLOPs <= executed FLOPs (recomputation only adds work): MFU <= HFU
//   hfu               executed FLOPs per device / peak <= step time (HFU <= 1; faster than peak is
//   impossible) metrics           MFU, HFU and TFLOP/s per device are the FLOPs over (step x devices x peak)
//   breakdown         every lane's categories plus idle add up to the step time
//   tasks             every task starts, computes and ends in order, inside the step
//   memory            an `ok` result fits in device memory
//   batch             samples per step = global batch = micro_batch x microbatches x dp where the plan says
//   status            a result that is not `ok` says why (status_detail)
//   choice            the reported candidate is the fastest feasible one per sample
#pragma once

#include <string>
#include <vector>

#include "podsim/report/run_result.hpp"
#include "podsim/topology/topology.hpp"

namespace podsim::report {

// Relative tolerance of the accounting identities (sums of floating-point seconds, FLOP ratios).
constexpr double kInvariantTolerance = 1e-6;

// Every invariant the result breaks, one message each ("hfu: ..."); empty when it is sound.
std::vector<std::string> invariant_violations(const RunResult& r, const topology::Topology& topo);

// Throws InvariantViolation listing every broken invariant and the result's settings.
void check_invariants(const RunResult& r, const topology::Topology& topo);

// One candidate setting the driver tried: infeasible ones (out of memory, ...) have feasible = false.
struct CandidateOutcome {
  std::string label;
  bool feasible = false;
  double step_time = 0;
  double samples_per_step = 0;
  double per_sample() const { return step_time / samples_per_step; }
};

// "choice": the candidate at `chosen` (or none, chosen < 0) must be the fastest feasible one per sample,
// and there must be one whenever any candidate was feasible. Throws InvariantViolation.
void check_choice(const std::vector<CandidateOutcome>& candidates, int chosen);

}  // namespace podsim::report
