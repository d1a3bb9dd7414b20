// podsim: predicts step time, throughput, memory and scaling of large-model training on GPU clusters,
// TPU pods and wafer-scale systems by simulating one training step. See README.md.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "podsim/cli/commands.hpp"
#include "podsim/cli/exit_status.hpp"
#include "podsim/cli/huge_page_heap.hpp"
#include "podsim/cli/unknown_command.hpp"
#include "podsim/core/version.hpp"

int main(int argc, char** argv) {
  podsim::cli::restart_plan_with_huge_page_heap(argc, argv);
  CLI::App app{
      "podsim: simulate one training step of a large model on a cluster and predict its step time,\n"
      "TFLOP/s per device, MFU, memory per device and where the time goes."};
  app.name("podsim");
  podsim::record_command_line(argc, argv);
  app.set_version_flag("--version", podsim::version(), "Print podsim's version and exit");
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  podsim run --topology topologies/dgx-a100-superpod.yaml --workload workloads/gpt3-175b.yaml --out "
      "out/\n"
      "  podsim run ... --set workload.parallel.pp=16 --set topology.nodes=128 --out out2/\n"
      "  podsim topo describe topologies/dgx-a100-superpod.yaml\n"
      "  podsim collective --topology topologies/dgx-a100-superpod.yaml --op all_reduce --devices 64 --bytes "
      "1GB\n"
      "  podsim sweep workloads/studies/gpt3-weak-scaling.yaml --out out/weak\n"
      "  podsim validate\n"
      "  podsim calibrate nccl-tests all_reduce_perf.log --topology topologies/dgx-a100-superpod.yaml\n"
      "Run 'podsim COMMAND --help' for the options of a command.");
  podsim::cli::add_run_command(app);
  podsim::cli::add_topo_command(app);
  podsim::cli::add_collective_command(app);
  podsim::cli::add_validate_command(app);
  podsim::cli::add_sweep_command(app);
  podsim::cli::add_plan_command(app);
  podsim::cli::add_calibrate_command(app);
  podsim::cli::add_version_command(app);
  podsim::cli::add_examples(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (auto message = podsim::cli::unknown_command_message(app, e)) {
      std::fprintf(stderr, "podsim: error: %s\n", message->c_str());
      return 2;
    }
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  } catch (const std::exception& e) {
    return podsim::cli::report_failure(e, stderr);
  }
  return 0;
}
