// The "Examples:" footer of each command's --help: two or three real command lines, appended after the
// command's own footer (kept here, in one table, so each is easy to check against the shipped files).
#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <vector>

#include "podsim/cli/unknown_command.hpp"

namespace podsim::cli {
namespace {

const std::map<std::string, std::vector<std::string>>& examples() {
  static const std::map<std::string, std::vector<std::string>> table = {
      {"run",
       {"podsim run -t topologies/dgx-h100-superpod.yaml -w workloads/gpt3-175b.yaml --out out/gpt3",
        "podsim run -t topologies/dgx-a100-superpod.yaml -w workloads/llama3-70b.yaml --set "
        "topology.nodes=64 "
        "--set workload.parallel.pp=4 --trace out/step.json",
        "podsim run -t topologies/tpu-v4-pod.yaml -w workloads/gpt3-xl.yaml --set topology.dims=[4,4,4] "
        "--set workload.training.precision=bf16"}},
      {"sweep",
       {"podsim sweep workloads/studies/gpt3-weak-scaling.yaml --out out/weak",
        "podsim sweep workloads/studies/gpt3-what-if.yaml --out out/what-if --jobs 2"}},
      {"merge", {"podsim merge out/weak-shard0 out/weak-shard1 --out out/weak"}},
      {"plan",
       {"podsim plan -t topologies/dgx-h100-superpod.yaml -w workloads/llama3-70b.yaml --out out/plan",
        "podsim plan -t topologies/dgx-a100-superpod.yaml -w workloads/gpt3-175b.yaml --set "
        "workload.parallel.tp=8",
        "podsim plan -t topologies/dgx-a100-superpod.yaml -w workloads/gpt3-175b.yaml --top 5 --distinct "
        "layout"}},
      {"validate",
       {"podsim validate", "podsim validate --out out/validation",
        "podsim validate --table validation/megatron-bridge-moe-ablations.csv"}},
      {"collective",
       {"podsim collective -t topologies/dgx-a100-superpod.yaml --op all_reduce --devices 64 --bytes 1GB",
        "podsim collective -t topologies/dgx-h100-superpod.yaml --op all_gather --devices 16 --bytes 8 "
        "--max-bytes 1GB",
        "podsim collective -t topologies/dgx-h100-superpod.yaml --op send_recv --per-node 1",
        "podsim collective -t topologies/dgx-h100-superpod.yaml --op all_reduce --devices 256 --bytes 1G "
        "--set topology.fabric.in_network_reduction=sharp"}},
      {"describe", {"podsim topo describe topologies/dgx-h100-superpod.yaml --set topology.nodes=32"}},
      {"version", {"podsim version", "podsim --version"}},
  };
  return table;
}

void add_to(CLI::App& cmd) {
  auto it = examples().find(cmd.get_name());
  if (it != examples().end()) {
    std::string text = cmd.get_footer().empty() ? "" : cmd.get_footer() + "\n";
    text += "Examples:\n";
    for (const auto& line : it->second) text += "  " + line + "\n";
    cmd.footer(text);
  }
  for (CLI::App* sub : cmd.get_subcommands([](const CLI::App*) { return true; })) add_to(*sub);
}

}  // namespace

void add_examples(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) add_to(*sub);
}

}  // namespace podsim::cli
