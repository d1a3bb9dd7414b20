// The `podsim plan` use case (plan.hpp).
#include "podsim/driver/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "podsim/core/config_node.hpp"
#include "podsim/core/error.hpp"
#include "podsim/driver/plan_output.hpp"
#include "podsim/driver/simulation.hpp"
#include "podsim/driver/sweep.hpp"
#include "podsim/topology/graph.hpp"
#include "podsim/topology/loader.hpp"
#include "podsim/topology/wafer_cluster.hpp"
#include "podsim/workload/pipeline_schedule.hpp"

namespace podsim::driver {
namespace {

void check_options(const PlanOptions& o) {
  if (o.top < 1)
    throw InputError(
        fmt::format("--top {}: the number of best candidates to find exactly must be 1 or more", o.top));
  if (o.jobs < 0 || o.jobs > kMaxSweepJobs)
    throw InputError(fmt::format("--jobs {}: expected 1 to {} worker processes, or 0 for one per core",
                                 o.jobs, kMaxSweepJobs));
}

// The search needs the Megatron step builder: a transformer_lm workload on a GPU cluster or a TPU torus.
void check_kind(const ConfigNode& root, const std::string& file, const topology::Topology& topo) {
  std::string kind = root.string("kind");
  if (kind != "transformer_lm")
    throw InputError(
        fmt::format("{}: podsim plan searches the parallel layout of kind transformer_lm; this "
                    "workload is kind {} (use podsim sweep for it)",
                    file, kind));
  if (topology::is_family<topology::WaferClusterSpec>(topo))
    throw InputError(
        fmt::format("{}: podsim plan searches tp/pp/dp layouts on GPU clusters and TPU pods; {} is a "
                    "wafer cluster, whose layer placement podsim run chooses itself",
                    file, topo.name));
}

}  // namespace

PlanRun run_plan(const PlanRequest& request) {
  PlanOptions options = request.options;
  check_options(options);
  if (options.jobs == 0) options.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::pair<std::string, std::string>> topo_sets, work_sets;
  split_sets(request.sets, topo_sets, work_sets);
  topology::Topology topo = topology::load_topology(request.topology_file, topo_sets);
  topology::validate(topo);
  ConfigNode root = ConfigNode::load_file(request.workload_file);
  std::vector<std::string> fixed;
  for (const auto& [key, value] : work_sets) {
    root.apply_override(key, value, fmt::format("--set workload.{}={}", key, value));
    fixed.push_back(key);
  }
  check_kind(root, request.workload_file, topo);
  PlanRun run{.space = read_space(root, request.workload_file, topo, !request.as_written, fixed),
              .result = {},
              .written = {},
              .title = ""};
  run.title = fmt::format("{} on {}", run.space.base.name, topo.name);
  run.result = run_plan(topo, run.space, options);
  if (!request.out.empty()) run.written = write_plan_files(request.out, run.title, run.space, run.result);
  return run;
}

Overrides pin_searched_keys(const std::string& workload_file, const Overrides& workload_sets,
                            const topology::Topology& topo) {
  ConfigNode root = ConfigNode::load_file(workload_file);
  for (const auto& [key, value] : workload_sets)
    root.apply_override(key, value, fmt::format("--set workload.{}={}", key, value));
  if (!needs_search(root)) return workload_sets;
  check_kind(root, workload_file, topo);
  Space space = read_space(root, workload_file, topo, false, {});
  PlanResult result = run_plan(topo, space, {.top = 1, .jobs = 1, .exhaustive = false, .progress = {}});
  if (result.ranked() == 0) {
    std::string why;
    for (const auto& [reason, n] : result.skipped) why += fmt::format("; {} x {}", n, reason);
    throw InputError(fmt::format("{}: no combination of the searched keys divides, fits and runs{}",
                                 workload_file, why.empty() ? "" : why));
  }
  Overrides pinned = workload_sets;
  const PlanRow& best = result.rows[0];
  for (size_t i = 0; i < space.keys.size(); ++i)
    if (space.keys[i].searched)
      pinned.emplace_back(space.keys[i].key->path, space.keys[i].key->label(best.values[i]));
  workload::WorkloadConfig w = resolve(space, best.values);
  pinned.emplace_back("parallel.schedule", workload::to_string(w.parallel.schedule));
  return pinned;
}

}  // namespace podsim::driver
