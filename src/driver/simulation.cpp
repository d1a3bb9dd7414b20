#include "podsim/driver/simulation.hpp"

#include <fmt/format.h>

#include "podsim/core/config_node.hpp"
#include "podsim/core/error.hpp"
#include "podsim/driver/plan.hpp"
#include "podsim/driver/provenance.hpp"
#include "podsim/driver/straggler_replay.hpp"
#include "podsim/engine/replay.hpp"
#include "podsim/report/invariants.hpp"
#include "podsim/report/link_class_bytes.hpp"
#include "podsim/report/link_classes.hpp"
#include "podsim/topology/graph.hpp"
#include "podsim/topology/loader.hpp"

namespace podsim::driver {

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
  // `tp: auto`, `pp: [4, 8]`, ...: the plan's search picks them (driver/plan.hpp).
  work_sets = pin_searched_keys(request.workload_file, work_sets, topo);
  auto model = workload::load_workload_model(request.workload_file, work_sets, topo);
  try {
    auto r = simulate(topo, *model, progress);
    r.topology_file = request.topology_file;
    r.workload_file = request.workload_file;
    r.provenance = run_provenance(request, topo);
    if (request.links && r.ok()) r.links = report::link_traffic(topo, r.plan.graph, r.step_time());
    if (request.trace && r.ok()) r.plan_class_bytes = report::plan_class_bytes(topo, r.plan.graph);
    return r;
  } catch (const InvariantViolation& e) {
    // Name the inputs as a command line that reproduces the violation.
    std::string repro =
        fmt::format("podsim run --topology {} --workload {}", request.topology_file, request.workload_file);
    for (const auto& s : request.sets) repro += fmt::format(" --set '{}'", s);
    throw InvariantViolation(fmt::format("{}\n  reproduce: {}", e.what(), repro));
  }
}

report::RunResult simulate(const topology::Topology& topo, const workload::WorkloadModel& model,
                           const Progress& progress) {
  report::RunResult meta;  // what every candidate's result shares
  meta.topology_name = topo.name;
  meta.workload_name = model.name();
  meta.workload_kind = model.kind();
  meta.device_name = topo.device.name;
  meta.topology_devices = topo.compute_device_count();
  if (topo.installed_devices_per_node > 0)
    meta.server_usage =
        fmt::format("{} of each server's {} GPUs", topo.devices_per_node, topo.installed_devices_per_node);
  meta.device_memory_capacity = topo.device.hbm_bytes;
  report::RunResult best = meta;
  auto candidates = model.candidates();
  std::vector<report::CandidateOutcome> outcomes;
  int chosen = -1;
  std::string infeasible_status, infeasible_detail;
  std::optional<MemoryShortfall> infeasible_shortfall;
  std::vector<std::string> log;
  std::vector<report::SearchRow> rows;  // the log as structured rows, for result.json
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (progress && candidates.size() > 1)
      progress(fmt::format("trying {} ({}/{})", candidates[i], i + 1, candidates.size()));
    report::CandidateOutcome outcome{candidates[i]};
    workload::StepPlan plan;
    try {
      plan = model.build(i);
    } catch (const InfeasibleConfig& e) {
      log.push_back(fmt::format("{}: {}", candidates[i], e.status()));
      rows.push_back({candidates[i], e.status()});
      outcomes.push_back(outcome);
      if (infeasible_detail.empty()) {  // candidates come smallest first: report the first one
        infeasible_status = e.status();
        infeasible_detail = e.what();
        infeasible_shortfall = e.shortfall();
      }
      continue;
    }
    report::RunResult r = meta;
    require_replica_layout(topo, plan);
    r.replay = engine::replay(topo, plan.graph);
    if (auto slow = replay_stragglers(topo, plan, r.replay)) {  // slow devices: the gating replica's step
      r.replay = std::move(slow->replay);
      plan.graph = std::move(slow->graph);
      plan.notes.push_back(straggler_note(slow->outcome));
      r.stragglers = std::move(slow->outcome);
    }
    r.plan = std::move(plan);
    log.push_back(fmt::format("{}: step {:.6g} s", candidates[i], r.step_time()));
    rows.push_back({candidates[i], "ok", r.step_time(), r.plan.samples_per_step});
    // Every candidate is checked, not only the one reported: an impossibly fast candidate would
    // otherwise win the search and be reported.
    r.stages = report::stage_breakdown(r.plan.graph, r.replay);
    r.mean = report::mean_breakdown(r.stages);
    report::check_invariants(r, topo);
    outcome.feasible = true;
    outcome.step_time = r.step_time();
    outcome.samples_per_step = r.plan.samples_per_step;
    outcomes.push_back(outcome);
    // Fastest = least time per sample: candidates of some kinds differ in samples per step.
    if (chosen < 0 || outcome.per_sample() < outcomes[static_cast<size_t>(chosen)].per_sample()) {
      chosen = static_cast<int>(i);
      best = std::move(r);
    }
  }
  report::check_choice(outcomes, chosen);
  if (candidates.size() > 1) {
    if (chosen >= 0) rows[static_cast<size_t>(chosen)].chosen = true;
    best.search_log = log;
    best.search = rows;
  }
  if (chosen < 0) {
    best.status = infeasible_status;
    best.status_detail = infeasible_detail;
    best.memory_shortfall = infeasible_shortfall;
    best.plan = model.describe_infeasible(0);
    report::check_invariants(best, topo);  // a chosen result was checked as a candidate above
  }
  best.plan_link_classes = report::plan_link_classes(topo, best.plan.graph);  // for the trace's details
  return best;
}

}  // namespace podsim::driver
