#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "podsim/cli/commands.hpp"
#include "podsim/driver/simulation.hpp"
#include "podsim/core/error.hpp"
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
    std::vector<std::pair<std::string, std::string>> t, w;
    driver::split_sets(opt->sets, t, w);
    if (!w.empty())
      throw InputError(
          fmt::format("--set workload.{}={}: topo describe reads no workload; only topology "
                      "keys can be set, e.g. --set topology.nodes=64",
                      w.front().first, w.front().second));
    auto topology = topology::load_topology(opt->file, t);
    std::fputs(topology::describe(topology).c_str(), stdout);
  });
}

}  // namespace podsim::cli
