// The `podsim plan` use case (plan.hpp).
#include "podsim/driver/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <thread>

#include "podsim/core/config_node.hpp"
#include "podsim/core/error.hpp"
#include "podsim/driver/plan_journal.hpp"
#include "podsim/driver/plan_output.hpp"
#include "podsim/driver/plan_shards.hpp"
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

Space load_plan_space(const PlanRequest& request, topology::Topology& topo) {
  check_options(request.options);
  std::vector<std::pair<std::string, std::string>> topo_sets, work_sets;
  split_sets(request.sets, topo_sets, work_sets);
  topo = topology::load_topology(request.topology_file, topo_sets);
  topology::validate(topo);
  ConfigNode root = ConfigNode::load_file(request.workload_file);
  std::vector<std::string> fixed;
  for (const auto& [key, value] : work_sets) {
    root.apply_override(key, value, fmt::format("--set workload.{}={}", key, value));
    fixed.push_back(key);
  }
  check_kind(root, request.workload_file, topo);
  Space space = read_space(root, request.workload_file, topo, !request.as_written, fixed);
  distinct_key_indices(space, request.options.distinct);  // an unknown --distinct name fails here
  return space;
}

PlanRun run_plan(const PlanRequest& request) {
  PlanOptions options = request.options;
  std::string shard = request.shard;
  // A task of a Slurm job array (plan.sbatch, or the user's own) runs its shard without being told.
  if (shard.empty() && std::getenv("SLURM_ARRAY_TASK_ID") && std::getenv("SLURM_ARRAY_TASK_COUNT"))
    shard = fmt::format("{}/{}", std::getenv("SLURM_ARRAY_TASK_ID"), std::getenv("SLURM_ARRAY_TASK_COUNT"));
  if (!shard.empty()) std::tie(options.shard, options.shards) = parse_shard(shard);
  if (options.shards > 1 && request.out.empty())
    throw InputError(
        fmt::format("--shard {}: a shard writes its candidates into --out DIR for podsim merge; "
                    "give --out",
                    shard));
  topology::Topology topo;
  PlanRun run{.space = load_plan_space(request, topo), .result = {}, .written = {}, .title = ""};
  if (options.jobs == 0) options.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  run.title = fmt::format("{} on {}", run.space.base.name, topo.name);
  run.top = options.top;
  if (request.resume && request.out.empty())
    throw InputError("--resume continues the search whose journal is in --out DIR: give --out");
  // With --out, each simulated candidate is journaled at once: an interrupted search loses none.
  std::optional<PlanJournal> journal;
  if (!request.out.empty()) {
    journal.emplace(request, topo, options.shard, options.shards);
    options.recall = [&journal](const std::string& label) { return journal->recall(label); };
    options.on_simulated = [&journal](const std::string& label, const SimOutcome& o) {
      journal->record(label, o);
    };
    if (options.progress)
      options.progress(journal->recorded_before() > 0
                           ? fmt::format("resuming: {} candidates simulated before are in {}",
                                         journal->recorded_before(), journal->path())
                           : fmt::format("each simulated candidate goes to {} at once (an interrupted "
                                         "search continues with --resume)",
                                         journal->path()));
  }
  run.result = run_plan(topo, run.space, options);
  if (options.shards > 1) {
    PlanRequest as_run = request;
    as_run.options = options;
    run.written = {write_plan_shard(request.out, as_run, run.result)};
  } else if (!request.out.empty()) {
    run.written = write_plan_files(request.out, run.title, run.space, run.result);
  }
  if (journal) journal->finish();
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
