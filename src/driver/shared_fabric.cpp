#include "podsim/driver/shared_fabric.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "podsim/core/error.hpp"
#include "podsim/engine/replay.hpp"
#include "podsim/plan/graph_merge.hpp"
#include "podsim/topology/families.hpp"
#include "podsim/topology/graph.hpp"
#include "podsim/topology/loader.hpp"
#include "podsim/workload/workload_model.hpp"

namespace podsim::driver {
namespace {

std::string node_text(const std::vector<int>& nodes) {  // 0-15,20
  std::string out;
  for (size_t i = 0; i < nodes.size();) {
    size_t j = i;
    while (j + 1 < nodes.size() && nodes[j + 1] == nodes[j] + 1) ++j;
    out += fmt::format("{}{}", out.empty() ? "" : ",",
                       i == j ? fmt::format("{}", nodes[i]) : fmt::format("{}-{}", nodes[i], nodes[j]));
    i = j + 1;
  }
  return out;
}

std::vector<std::vector<int>> spread(int topology_nodes, const std::vector<int>& needed) {
  std::vector<std::vector<int>> out(needed.size());
  size_t job = 0;
  for (int n = 0; n < topology_nodes; ++n) {
    size_t tried = 0;
    while (tried < needed.size() && static_cast<int>(out[job].size()) >= needed[job])
      job = (job + 1) % needed.size(), ++tried;
    if (tried == needed.size()) break;
    out[job].push_back(n);
    job = (job + 1) % needed.size();
  }
  return out;
}

}  // namespace

Placement placement_from_string(const std::string& s) {
  if (s == "packed") return Placement::packed;
  if (s == "spread") return Placement::spread;
  throw InputError(
      fmt::format("--placement {}: valid placements are packed (job after job on consecutive "
                  "servers) and spread (servers dealt round robin); --job-nodes gives explicit lists",
                  s));
}

std::vector<int> parse_node_list(const std::string& text, const std::string& flag) {
  std::vector<int> out;
  size_t pos = 0;
  auto bad = [&] {
    return InputError(
        fmt::format("{} {}: expected server numbers and ranges, e.g. 0-15,32,40-47", flag, text));
  };
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string part = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    size_t dash = part.find('-');
    try {
      size_t used = 0;
      int a = std::stoi(part, &used);
      int b = dash == std::string::npos ? a : std::stoi(part.substr(dash + 1));
      if (a < 0 || b < a || (dash == std::string::npos && used != part.size())) throw bad();
      // More servers than any fabric holds is a typo (and 0-2147483647 would never end): refused before
      // the list is built.
      constexpr long long kMostServers = 1000000;
      if (static_cast<long long>(b) - a + 1 + static_cast<long long>(out.size()) > kMostServers)
        throw InputError(fmt::format("{} {}: {} lists more than {} servers", flag, text, part, kMostServers));
      for (int n = a; n <= b; ++n) out.push_back(n);
    } catch (const std::logic_error&) {
      throw bad();
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

std::vector<std::vector<int>> place_jobs(int topology_nodes, const std::vector<int>& needed,
                                         Placement placement,
                                         const std::vector<std::vector<int>>& explicit_nodes) {
  long long total = 0;
  for (int n : needed) total += n;
  if (placement != Placement::explicit_ && total > topology_nodes)
    throw InputError(
        fmt::format("the jobs need {} servers together but the topology has {}; raise topology.nodes", total,
                    topology_nodes));
  if (placement == Placement::spread) return spread(topology_nodes, needed);
  std::vector<std::vector<int>> out(needed.size());
  if (placement == Placement::packed) {
    int next = 0;
    for (size_t j = 0; j < needed.size(); ++j)
      for (int k = 0; k < needed[j]; ++k) out[j].push_back(next++);
    return out;
  }
  std::set<int> taken;
  for (size_t j = 0; j < needed.size(); ++j) {
    const auto& list = explicit_nodes.at(j);
    for (int n : list) {
      if (n >= topology_nodes)
        throw InputError(fmt::format("--job-nodes of job {}: server {} is outside the topology's 0-{}", j + 1,
                                     n, topology_nodes - 1));
      if (!taken.insert(n).second)
        throw InputError(
            fmt::format("--job-nodes of job {}: server {} is already given to another job (or listed "
                        "twice); jobs cannot share a server",
                        j + 1, n));
    }
    if (static_cast<int>(list.size()) < needed[j])
      throw InputError(fmt::format("--job-nodes of job {}: {} servers listed but the job needs {}", j + 1,
                                   list.size(), needed[j]));
    out[j].assign(list.begin(), list.begin() + needed[j]);
  }
  return out;
}

report::SharedFabricResult simulate_shared_fabric(const SharedFabricRequest& request,
                                                  const Progress& progress) {
  std::vector<std::pair<std::string, std::string>> topo_sets, ignored;
  split_sets(request.topology_sets, topo_sets, ignored);
  topology::Topology topo = topology::load_topology(request.topology_file, topo_sets);
  topology::validate(topo);
  if (!topo.family<topology::GpuClusterData>())
    throw InputError(
        fmt::format("{}: --job places jobs on the servers of a gpu_cluster topology; this one is {}",
                    request.topology_file, topo.kind));
  report::SharedFabricResult out;
  out.topology_file = request.topology_file;
  out.topology_name = topo.name;
  out.topology_nodes = topo.nodes;
  const int per_node = topo.devices_per_node;
  std::vector<int> needed;
  for (size_t j = 0; j < request.jobs.size(); ++j) {
    const auto& job = request.jobs[j];
    if (progress)
      progress(fmt::format("job {} alone ({}/{})", job.workload_file, j + 1, request.jobs.size()));
    std::vector<std::pair<std::string, std::string>> none, work_sets;
    split_sets(job.sets, none, work_sets);
    auto model = workload::load_workload_model(job.workload_file, work_sets, topo);
    report::JobOnFabric r;
    r.workload_file = job.workload_file;
    r.alone = simulate(topo, *model);
    r.alone.topology_file = request.topology_file;
    r.alone.workload_file = job.workload_file;
    if (!r.alone.ok())
      throw InputError(fmt::format("job {} ({}): {}: {}", j + 1, job.workload_file, r.alone.status,
                                   r.alone.status_detail));
    needed.push_back((r.alone.devices() + per_node - 1) / per_node);
    out.jobs.push_back(std::move(r));
  }
  std::vector<std::vector<int>> explicit_nodes;
  for (const auto& job : request.jobs) explicit_nodes.push_back(job.nodes);
  auto nodes = place_jobs(topo.nodes, needed, request.placement, explicit_nodes);
  // One graph: each job's graph moved to its servers, device order inside a server kept.
  plan::TaskGraph together;
  std::vector<std::pair<int, int>> task_range;
  for (size_t j = 0; j < out.jobs.size(); ++j) {
    auto& job = out.jobs[j];
    job.nodes = nodes[j];
    std::vector<int> map(static_cast<size_t>(topo.device_count()), -1);
    for (int d = 0; d < needed[j] * per_node; ++d)
      map[static_cast<size_t>(d)] = nodes[j][static_cast<size_t>(d / per_node)] * per_node + d % per_node;
    // In-network reduction (NVLS) ends flows at a server's NVSwitch: it moves with the server.
    std::vector<int> vertex_map(topo.vertices.size(), -1);
    if (const auto* gpu = topo.family<topology::GpuClusterData>(); gpu && !gpu->nvswitch_of_device.empty())
      for (int d = 0; d < needed[j] * per_node; ++d)
        vertex_map[static_cast<size_t>(gpu->nvswitch_of(d))] = gpu->nvswitch_of(map[static_cast<size_t>(d)]);
    plan::TaskGraph g = job.alone.plan.graph;
    plan::relocate_devices(g, map, vertex_map);
    job.alone_step = engine::replay(topo, g).makespan;  // alone on its own servers: the fair baseline
    int first = plan::append_graph(together, g, fmt::format("job {}", j + 1));
    task_range.emplace_back(first, static_cast<int>(together.tasks.size()));
  }
  if (progress) progress(fmt::format("{} jobs together", out.jobs.size()));
  engine::ReplayResult r = engine::replay(topo, together);
  out.makespan = r.makespan;
  out.simgrid_activities = r.simgrid_activities;
  for (size_t j = 0; j < out.jobs.size(); ++j) {
    double start = 1e300, end = 0;
    for (int t = task_range[j].first; t < task_range[j].second; ++t) {
      start = std::min(start, r.tasks[static_cast<size_t>(t)].start);
      end = std::max(end, r.tasks[static_cast<size_t>(t)].end);
    }
    out.jobs[j].together_step = end - std::min(start, end);
  }
  out.notes.push_back(
      "one step of every job, all started together: a job whose step is shorter than another's sees the "
      "other's traffic for its whole step (a steady state would interleave them); each job is the setting "
      "podsim picks for it alone");
  for (size_t j = 0; j < out.jobs.size(); ++j)
    out.notes.push_back(
        fmt::format("job {} ({}) on servers {}", j + 1, out.jobs[j].workload_file, node_text(nodes[j])));
  return out;
}

}  // namespace podsim::driver
