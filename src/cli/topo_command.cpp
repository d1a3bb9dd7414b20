#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "podsim/cli/commands.hpp"
#include "podsim/cli/topology_sets.hpp"
#include "podsim/core/error.hpp"
#include "podsim/driver/simulation.hpp"
#include "podsim/topology/describe.hpp"
#include "podsim/topology/loader.hpp"

namespace podsim::cli {

void add_topo_command(CLI::App& app) {
  CLI::App* topo = app.add_subcommand("topo", "Inspect topologies");
  topo->require_subcommand(1);
  struct Options {
    std::string file;
    std::vector<std::string> sets;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* describe = topo->add_subcommand(
      "describe", "Print devices, links, switch counts, diameter and bisection bandwidth");
  describe->add_option("file", opt->file, "Topology YAML")->required();
  describe->add_option("--set,-s", opt->sets, "Override a key, e.g. --set topology.nodes=64 (repeatable)");
  describe->callback([opt] {
    Overrides t = topology_sets_only(opt->sets, "topo describe reads no workload", 64);
    auto topology = topology::load_topology(opt->file, t);
    fmt::print("{}", topology::describe(topology));
  });
}

}  // namespace podsim::cli
