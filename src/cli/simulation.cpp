#include "podsim/cli/simulation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "podsim/core/config_node.hpp"
#include "podsim/core/error.hpp"
#include "podsim/engine/replay.hpp"
#include "podsim/topology/graph.hpp"
#include "podsim/topology/loader.hpp"

namespace podsim::cli {

void split_sets(const std::vector<std::string>& sets,
                std::vector<std::pair<std::string, std::string>>& topology,
                std::vector<std::pair<std::string, std::string>>& workload) {
  for (const auto& s : sets) {
    auto [key, value] = split_assignment(s);
    if (key.rfind("topology.", 0) == 0)
      topology.emplace_back(key.substr(9), value);
    else if (key.rfind("workload.", 0) == 0)
      workload.emplace_back(key.substr(9), value);
    else
      throw InputError(
          fmt::format("--set {}: the key must start with 'topology.' or 'workload.', e.g. --set "
                      "workload.parallel.pp=16 or --set topology.nodes=128",
                      s));
  }
}

report::RunResult simulate(const RunRequest& request, const Progress& progress) {
  std::vector<std::pair<std::string, std::string>> topo_sets, work_sets;
  split_sets(request.sets, topo_sets, work_sets);
  topology::Topology topo = topology::load_topology(request.topology_file, topo_sets);
  topology::validate(topo);
  auto model = workload::load_workload_model(request.workload_file, work_sets, topo);
  auto r = simulate(topo, *model, progress);
  r.topology_file = request.topology_file;
  r.workload_file = request.workload_file;
  return r;
}

report::RunResult simulate(const topology::Topology& topo, const workload::WorkloadModel& model,
                           const Progress& progress) {
  report::RunResult best;
  best.topology_name = topo.name;
  best.workload_name = model.name();
  best.workload_kind = model.kind();
  best.device_name = topo.device.name;
  best.topology_devices = topo.compute_device_count();
  best.device_memory_capacity = topo.device.hbm_bytes;
  auto candidates = model.candidates();
  double best_time = std::numeric_limits<double>::infinity();
  std::string infeasible_status, infeasible_detail;
  std::vector<std::string> log;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (progress && candidates.size() > 1)
      progress(fmt::format("trying {} ({}/{})", candidates[i], i + 1, candidates.size()));
    workload::StepPlan plan;
    try {
      plan = model.build(i);
    } catch (const InfeasibleConfig& e) {
      log.push_back(fmt::format("{}: {}", candidates[i], e.status()));
      if (infeasible_detail.empty()) {  // candidates come smallest first: report the first one
        infeasible_status = e.status();
        infeasible_detail = e.what();
      }
      continue;
    }
    engine::ReplayResult replay = engine::replay(topo, plan.graph);
    log.push_back(fmt::format("{}: step {:.6g} s", candidates[i], replay.makespan));
    // Fastest = least time per sample: candidates of some kinds differ in samples per step.
    double per_sample = replay.makespan / std::max(plan.samples_per_step, 1e-300);
    if (per_sample < best_time) {
      best_time = per_sample;
      best.plan = std::move(plan);
      best.replay = std::move(replay);
    }
  }
  if (candidates.size() > 1) best.search_log = log;
  if (!std::isfinite(best_time)) {
    best.status = infeasible_status;
    best.status_detail = infeasible_detail;
    best.plan = model.describe_infeasible(0);
    return best;
  }
  best.stages = report::stage_breakdown(best.plan.graph, best.replay);
  best.mean = report::mean_breakdown(best.stages);
  return best;
}

}  // namespace podsim::cli
