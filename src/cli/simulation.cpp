#include "podsim/cli/simulation.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "podsim/core/config_node.hpp"
#include "podsim/core/error.hpp"
#include "podsim/engine/replay.hpp"
#include "podsim/topology/graph.hpp"
#include "podsim/topology/loader.hpp"
#include "podsim/workload/megatron_builder.hpp"
#include "podsim/workload/pipeline_schedule.hpp"
#include "podsim/workload/workload_loader.hpp"

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
  workload::WorkloadConfig w = workload::load_workload(request.workload_file, work_sets, topo);
  auto r = simulate(topo, w, progress);
  r.topology_file = request.topology_file;
  r.workload_file = request.workload_file;
  return r;
}

report::RunResult simulate(const topology::Topology& topo, const workload::WorkloadConfig& w,
                           const Progress& progress) {
  report::RunResult best;
  best.topology_name = topo.name;
  best.workload_name = w.name;
  best.device_name = topo.device.name;
  best.topology_devices = topo.device_count();
  best.device_memory_capacity = topo.device.hbm_bytes;
  best.devices = w.parallel.tp * w.parallel.pp * w.parallel.dp;
  auto settings = workload::candidate_settings(w);
  if (settings.empty())
    throw InputError(
        fmt::format("{}: no micro_batch / virtual_stages setting satisfies the divisibility rules of this "
                    "workload; set them explicitly to see which rule fails",
                    w.file));
  double best_time = std::numeric_limits<double>::infinity();
  std::string oom_detail;
  std::vector<std::string> log;
  for (size_t i = 0; i < settings.size(); ++i) {
    auto [mb, v] = settings[i];
    if (progress && settings.size() > 1)
      progress(fmt::format("trying micro_batch={} virtual_stages={} ({}/{})", mb, v, i + 1, settings.size()));
    workload::TrainingStep step;
    try {
      step = workload::build_megatron_step(topo, w, mb, v);
    } catch (const InfeasibleConfig& e) {
      log.push_back(fmt::format("micro_batch={} virtual_stages={}: {}", mb, v, e.status()));
      if (oom_detail.empty()) oom_detail = e.what();  // settings start with the smallest micro-batch
      continue;
    }
    engine::ReplayResult replay = engine::replay(topo, step.graph);
    log.push_back(fmt::format("micro_batch={} virtual_stages={}: step {:.6g} s", mb, v, replay.makespan));
    if (replay.makespan < best_time) {
      best_time = replay.makespan;
      best.step = std::move(step);
      best.replay = std::move(replay);
    }
  }
  if (settings.size() > 1) best.search_log = log;
  if (!std::isfinite(best_time)) {
    best.status = "out_of_memory";
    best.status_detail = oom_detail;
    // Describe the first setting's memory so the user sees what did not fit.
    auto [mb, v] = settings.front();
    best.step.config = w;
    best.step.config.training.micro_batch = mb;
    best.step.config.parallel.virtual_stages = v;
    try {  // the memory the smallest setting would need, for the report
      auto programs = workload::build_schedule(
          w.parallel.pp == 1 ? workload::Schedule::none : w.parallel.schedule, w.parallel.pp,
          static_cast<int>(w.training.global_batch / (static_cast<long long>(w.parallel.dp) * mb)), v);
      best.step.memory =
          workload::stage_memory(w, mb, v, workload::peak_in_flight(programs), topo.device_profile);
    } catch (const std::exception&) {
    }
    return best;
  }
  best.stages = report::stage_breakdown(best.step.graph, best.replay);
  best.mean = report::mean_breakdown(best.stages);
  return best;
}

}  // namespace podsim::cli
