#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>

#include "podsim/cli/commands.hpp"
#include "podsim/cli/topology_sets.hpp"
#include "podsim/core/error.hpp"
#include "podsim/driver/simulation.hpp"
#include "podsim/engine/replay.hpp"
#include "podsim/network/collective.hpp"
#include "podsim/network/link_load.hpp"
#include "podsim/topology/loader.hpp"

namespace podsim::cli {
namespace {

double parse_bytes(const std::string& text, const std::string& flag) {
  size_t pos = 0;
  double value = 0;
  try {
    value = std::stod(text, &pos);
  } catch (const std::exception&) {
    throw InputError(fmt::format("{} {}: expected a size such as 8, 64KB, 1MiB or 2GB", flag, text));
  }
  std::string unit = text.substr(pos);
  double scale = 1;
  if (unit.empty() || unit == "B")
    scale = 1;
  else if (unit == "KB" || unit == "K")
    scale = 1e3;
  else if (unit == "MB" || unit == "M")
    scale = 1e6;
  else if (unit == "GB" || unit == "G")
    scale = 1e9;
  else if (unit == "KiB")
    scale = 1024.0;
  else if (unit == "MiB")
    scale = 1024.0 * 1024;
  else if (unit == "GiB")
    scale = 1024.0 * 1024 * 1024;
  else
    throw InputError(
        fmt::format("{} {}: unknown unit '{}' (use B, KB, MB, GB, KiB, MiB, GiB)", flag, text, unit));
  if (!(value > 0) || !std::isfinite(value))
    throw InputError(fmt::format("{} {}: must be more than 0 bytes", flag, text));
  return value * scale;
}

std::string size_text(double bytes) {
  if (bytes >= 1e9) return fmt::format("{:.4g} GB", bytes / 1e9);
  if (bytes >= 1e6) return fmt::format("{:.4g} MB", bytes / 1e6);
  if (bytes >= 1e3) return fmt::format("{:.4g} KB", bytes / 1e3);
  return fmt::format("{:.4g} B", bytes);
}

}  // namespace

void add_collective_command(CLI::App& app) {
  struct Options {
    std::string topology, op = "all_reduce", algorithm = "ring", bytes = "1GB", max_bytes;
    int devices = 8, per_node = 0;
    std::vector<std::string> sets;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd =
      app.add_subcommand("collective", "Time a collective on a topology, printed like nccl-tests");
  cmd->add_option("--topology,-t", opt->topology, "Topology YAML")->required();
  cmd->add_option("--op", opt->op,
                  "all_reduce, all_gather, reduce_scatter, all_to_all, broadcast or send_recv");
  CLI::Option* devices = cmd->add_option("--devices,-n", opt->devices,
                                         "Number of ranks in the group (send_recv: exactly 2, its default)");
  CLI::Option* per_node = cmd->add_option(
      "--per-node", opt->per_node,
      "Ranks per node (server, TPU chip group, CS-2; default: fill nodes); 1 puts one rank on each node");
  cmd->add_option("--bytes,-b", opt->bytes, "Size (nccl-tests convention), e.g. 8, 64KB, 1GB");
  cmd->add_option("--max-bytes,-e", opt->max_bytes,
                  "Sweep sizes from --bytes up to this, doubling (like nccl-tests -b/-e/-f 2)");
  cmd->add_option("--algorithm,-a", opt->algorithm,
                  "ring, tree, hierarchical (all_reduce) or direct (all_to_all)");
  cmd->add_option("--set,-s", opt->sets, "Override a topology key, e.g. --set topology.nodes=16");
  cmd->footer(
      "The collective is decomposed into flows over the topology's links and simulated in SimGrid on an\n"
      "otherwise idle machine. algbw = size / time; busbw = algbw x the nccl-tests factor (2(n-1)/n for\n"
      "all_reduce, (n-1)/n for all_gather, reduce_scatter and all_to_all, 1 otherwise). 'bound by' names\n"
      "the most loaded link class.");
  cmd->callback([opt, devices, per_node_option = per_node] {
    Overrides t = topology_sets_only(opt->sets, "a collective has no workload", 16);
    auto topo = topology::load_topology(opt->topology, t);
    network::Collective c;
    try {
      c.kind = network::parse_collective(opt->op);
      c.algorithm = network::parse_algorithm(opt->algorithm);
    } catch (const std::invalid_argument& e) {
      throw InputError(std::string("--op/--algorithm: ") + e.what());
    }
    // send_recv is one transfer between two ranks: any other count would be silently ignored.
    if (c.kind == network::CollectiveKind::send_recv) {
      if (devices->count() && opt->devices != 2)
        throw InputError(fmt::format(
            "--devices {}: send_recv is one transfer between exactly 2 ranks; use --devices 2 (the default "
            "for send_recv) and --per-node 1 to cross servers",
            opt->devices));
      opt->devices = 2;
    }
    if (opt->devices < 2) throw InputError("--devices: a collective needs at least 2 ranks");
    if (per_node_option->count() && opt->per_node < 1)
      throw InputError(fmt::format(
          "--per-node {}: must be at least 1 rank per node; leave it out to fill each node", opt->per_node));
    int per_node = per_node_option->count() ? opt->per_node : topo.devices_per_node;
    if (per_node > topo.devices_per_node)
      throw InputError(fmt::format("--per-node {}: a server of this topology has {} devices", per_node,
                                   topo.devices_per_node));
    for (int i = 0; static_cast<int>(c.group.size()) < opt->devices; ++i) {
      int node = i / per_node, local = i % per_node;
      if (node >= topo.nodes)
        throw InputError(
            fmt::format("--devices {}: only {} servers x {} ranks available; add --set topology.nodes=N",
                        opt->devices, topo.nodes, per_node));
      c.group.push_back(node * topo.devices_per_node + local);
    }
    double first = parse_bytes(opt->bytes, "--bytes");
    double last = opt->max_bytes.empty() ? first : parse_bytes(opt->max_bytes, "--max-bytes");
    std::vector<double> sizes;
    for (double s = first; s <= last * (1 + 1e-9); s *= 2) sizes.push_back(s);
    if (sizes.size() > 64) throw InputError("--max-bytes: at most 64 sizes per sweep");

    // One graph: the sizes run one after another, so a single replay times all of them.
    workload::TaskGraph graph;
    graph.stages = 1;
    graph.stage_devices = {c.group[0]};
    int stream = graph.add_stream("collective", 0, c.group[0]);
    std::vector<std::string> bound;
    for (double s : sizes) {
      c.bytes = s;
      auto plan = network::plan_collective(topo, c);
      std::string cls = "-";
      if (!plan.empty()) {  // the phase that moves the most data names the bound
        network::PhaseCost cost;
        for (const auto& phase : plan) {
          auto c = network::idle_phase_cost(topo, phase);
          if (c.transfer >= cost.transfer) cost = c;
        }
        if (cost.bottleneck_link >= 0) cls = topology::to_string(topo.links[cost.bottleneck_link].cls);
        if (cost.transfer < cost.software) cls = "latency";
      }
      bound.push_back(cls);
      workload::Task task;
      task.stream = stream;
      task.stage = 0;
      task.plan = graph.add_plan(std::move(plan));
      if (graph.tasks.size()) task.deps.push_back(static_cast<int>(graph.tasks.size()) - 1);
      graph.add_task(std::move(task));
    }
    auto result = engine::replay(topo, graph);
    // What actually runs: all_to_all and send_recv have one algorithm whatever --algorithm says.
    const char* algorithm = c.kind == network::CollectiveKind::all_to_all  ? "direct"
                            : c.kind == network::CollectiveKind::send_recv ? "point-to-point"
                                                                           : network::to_string(c.algorithm);
    fmt::print("# podsim collective: {} ({}) over {} ranks of {} ({} per node)\n", network::to_string(c.kind),
               algorithm, static_cast<int>(c.group.size()), topo.name, per_node);
    fmt::print("# {:>12} {:>14} {:>12} {:>12} {:>12}  {}\n", "size", "size(B)", "time(us)", "algbw(GB/s)",
               "busbw(GB/s)", "bound by");
    for (size_t i = 0; i < sizes.size(); ++i) {
      double time = result.tasks[i].end - result.tasks[i].start;
      double algbw = time > 0 ? sizes[i] / time / 1e9 : 0;
      double busbw = algbw * network::bus_factor(c.kind, static_cast<int>(c.group.size()));
      fmt::print("  {:>12} {:14.0f} {:12.2f} {:12.2f} {:12.2f}  {}\n", size_text(sizes[i]), sizes[i],
                 time * 1e6, algbw, busbw, bound[i]);
    }
  });
}

}  // namespace podsim::cli
