// The figures of a goodput estimate (computed by driver::assess_goodput, written by report/goodput_text):
// the job's failure rate by component, its checkpoint costs, and the goodput at the interval used.
#pragma once

#include <string>
#include <vector>

#include "podsim/reliability/goodput.hpp"
#include "podsim/reliability/reliability_profile.hpp"

namespace podsim::reliability {

struct ComponentShare {
  ComponentFailures component;
  double units = 0;              // of this component in the job's share of the machine
  double failures_per_hour = 0;  // units / MTBF
};

struct GoodputAssessment {
  std::string profile_name, profile_file;
  std::vector<ComponentShare> components;
  double failures_per_hour = 0;  // of the job
  double checkpoint_bytes = 0;
  double checkpoint_write_seconds = 0;     // to the storage tier
  double checkpoint_blocking_seconds = 0;  // training stopped per checkpoint (the snapshot when async)
  double restore_seconds = 0;              // reading the checkpoint back after a failure
  double restart_seconds = 0;              // per failure, restore included
  CheckpointedJob job;
  GoodputEstimate estimate;  // at the interval used (the optimum unless one is given)
  GoodputEstimate optimum;
  double young_daly_interval_seconds = 0;
  MonteCarloGoodput monte_carlo;  // at the interval used
  double train_tokens = 0;                     // the amount the time to train is for
  double ideal_train_seconds = 0;              // without failures or checkpoints
  double expected_train_seconds = 0;
  std::vector<std::string> notes;
};

}  // namespace podsim::reliability
