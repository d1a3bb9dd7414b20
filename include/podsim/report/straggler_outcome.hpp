// What slow devices did to a step (issue 19): the step against a perfectly balanced cluster and which
// replica and stage gate it. Filled by driver/straggler_replay; absent when every device is nominal.
#pragma once

#include <string>
#include <vector>

namespace podsim::report {

struct StragglerOutcome {
  int slow_devices = 0;        // in the job (devices of the topology outside it do not count)
  int slow_replicas = 0;       // data-parallel replicas with at least one slow device
  int replicas = 0;            // data-parallel replicas of the job
  int lockstep_replicas = 1;   // replicas that synchronise every layer (expert parallelism)
  int patterns_simulated = 0;  // distinct replica speed patterns replayed (the rest stay folded)
  int patterns_skipped = 0;    // undominated patterns beyond the replay budget (then a lower bound)
  double balanced_step = 0;    // seconds, every device at full speed
  double step = 0;             // seconds, with the slow devices
  int gating_replica = -1;     // first replica of the group whose pattern gates the step
  std::vector<double> gating_stage_speed;  // per pipeline stage, of that group
  std::vector<std::string> entries;        // the topology's slowdowns as written
  double loss() const { return balanced_step > 0 ? step / balanced_step - 1 : 0; }
};

}  // namespace podsim::report
