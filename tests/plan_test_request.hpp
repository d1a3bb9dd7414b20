// The small search the plan shard and journal tests run: Llama 3 8B on two DGX H100, tp, pp and
// micro_batch searched, the rest as written.
#pragma once

#include <string>

#include "podsim/driver/plan.hpp"
#include "test_helpers.hpp"

namespace podsim::testing {

inline driver::PlanRequest small_plan_request(const std::string& workload_file, const std::string& out) {
  driver::PlanRequest r;
  r.topology_file = source_path("topologies/dgx-h100-superpod.yaml");
  r.workload_file = workload_file;
  r.sets = {"topology.nodes=2",
            "workload.parallel.tp=[1, 2, 4]",
            "workload.parallel.pp=[1, 2, 4]",
            "workload.training.micro_batch=[1, 2]",
            "workload.training.global_batch=32",
            "workload.model.seq_len=4096"};
  r.as_written = true;
  r.options = {.top = 3, .jobs = 2, .exhaustive = false, .progress = {}};
  r.out = out;
  return r;
}

}  // namespace podsim::testing
