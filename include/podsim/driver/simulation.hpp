// One simulated training step from files and overrides: load, expand `auto` settings, build each
// candidate, replay it, keep the fastest that fits, account where its time went.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "podsim/report/run_result.hpp"
#include "podsim/topology/topology.hpp"
#include "podsim/workload/workload_model.hpp"

namespace podsim::driver {

struct RunRequest {
  std::string topology_file;
  std::string workload_file;
  std::vector<std::string> sets;  // "topology.nodes=128", "workload.parallel.pp=16"
  bool links = false;             // also count bytes per link (RunResult::links, --links)
  bool trace = false;             // also count bytes per plan and link class (RunResult::plan_class_bytes)
};

using Progress = std::function<void(const std::string&)>;

// Splits --set assignments by their topology./workload. prefix; throws InputError otherwise.
void split_sets(const std::vector<std::string>& sets,
                std::vector<std::pair<std::string, std::string>>& topology,
                std::vector<std::pair<std::string, std::string>>& workload);

report::RunResult simulate(const RunRequest& request, const Progress& progress = {});
report::RunResult simulate(const topology::Topology& topo, const workload::WorkloadModel& model,
                           const Progress& progress = {});

}  // namespace podsim::driver
