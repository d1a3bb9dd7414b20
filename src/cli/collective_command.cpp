#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>

#include "podsim/cli/commands.hpp"
#include "podsim/cli/topology_sets.hpp"
#include "podsim/core/error.hpp"
#include "podsim/driver/collective.hpp"
#include "podsim/network/collective.hpp"

namespace podsim::cli {
namespace {

// "a, b or c": the valid names of a table, for --help.
std::string either_of(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
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
    std::string topology, op = "all_reduce", algorithm = "auto", protocol = "auto", bytes = "1GB", max_bytes;
    int devices = 8, per_node = 0;
    std::vector<std::string> sets;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd =
      app.add_subcommand("collective", "Time a collective on a topology, printed like nccl-tests");
  cmd->add_option("--topology,-t", opt->topology, "Topology YAML")->required();
  cmd->add_option("--op", opt->op, either_of(network::kCollectiveKindNames.names()));
  CLI::Option* devices = cmd->add_option("--devices,-n", opt->devices,
                                         "Number of ranks in the group (send_recv: exactly 2, its default)");
  CLI::Option* per_node = cmd->add_option(
      "--per-node", opt->per_node,
      "Ranks per node (server, TPU chip group, CS-2; default: fill nodes); 1 puts one rank on each node");
  cmd->add_option(
      "--bytes,-b", opt->bytes,
      "Size, e.g. 8, 64KB, 1GB (powers of 10) or 64K, 1G, 1GiB (powers of 2, as nccl-tests reads -b)");
  cmd->add_option("--max-bytes,-e", opt->max_bytes,
                  "Sweep sizes from --bytes up to this, doubling (like nccl-tests -b/-e/-f 2)");
  cmd->add_option(
      "--algorithm,-a", opt->algorithm,
      "auto (default: least predicted time, like NCCL's tuner), ring, tree, hierarchical, nvls (all_reduce; "
      "NVLink SHARP in one NVLink domain, or per server with InfiniBand SHARP between), nvls_tree "
      "(all_reduce; "
      "NVLS in each server, a tree across), collnet_direct (all_reduce; InfiniBand SHARP, needs "
      "fabric.in_network_reduction: sharp), pat (all_gather, reduce_scatter; one rank per server) or direct "
      "(all_to_all); like NCCL_ALGO");
  cmd->add_option(
      "--protocol,-p", opt->protocol,
      "auto (default), LL, LL128 or Simple, like NCCL_PROTO (profiles without `protocols:` model Simple)");
  cmd->add_option("--set,-s", opt->sets, "Override a topology key, e.g. --set topology.nodes=16");
  cmd->footer(
      "The collective is decomposed into flows over the topology's links and simulated in SimGrid on an\n"
      "otherwise idle machine. algbw = size / time; busbw = algbw x the nccl-tests factor (2(n-1)/n for\n"
      "all_reduce, (n-1)/n for all_gather, reduce_scatter and all_to_all, 1 otherwise). 'bound by' names\n"
      "the most loaded link class.");
  cmd->callback([opt, devices, per_node_option = per_node] {
    Overrides t = topology_sets_only(opt->sets, "a collective has no workload", 16);
    driver::CollectiveRequest request{opt->topology,
                                      t,
                                      opt->op,
                                      opt->algorithm,
                                      opt->protocol,
                                      opt->bytes,
                                      opt->max_bytes,
                                      opt->devices,
                                      devices->count() > 0,
                                      opt->per_node,
                                      per_node_option->count() > 0};
    auto timing = driver::time_collective(request);
    fmt::print("# podsim collective: {} ({}) over {} ranks of {} ({} per node)\n", timing.kind,
               timing.algorithm, timing.ranks, timing.topology_name, timing.per_node);
    fmt::print("# {:>12} {:>14} {:>12} {:>12} {:>12}  {:<10} {:<14} {}\n", "size", "size(B)", "time(us)",
               "algbw(GB/s)", "busbw(GB/s)", "bound by", "algorithm", "protocol");
    for (const auto& s : timing.sizes)
      fmt::print("  {:>12} {:14.0f} {:12.2f} {:12.2f} {:12.2f}  {:<10} {:<14} {}\n", size_text(s.bytes),
                 s.bytes, s.seconds * 1e6, s.algbw_GBps, s.busbw_GBps, s.bound_by, s.algorithm, s.protocol);
  });
}

}  // namespace podsim::cli
