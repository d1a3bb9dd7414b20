// podsim calibrate: turns microbenchmark measurements into calibration profiles.
//   fit         calib-gemm + calib-memory CSVs -> device compute profile
//   nccl-tests  nccl-tests logs -> fabric (collective) profile
// This file only declares the options; the fit layer (fit/device_calibration.hpp, fit/nccl_import.hpp)
// does the work.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <memory>

#include "podsim/cli/commands.hpp"
#include "podsim/driver/simulation.hpp"
#include "podsim/fit/device_calibration.hpp"
#include "podsim/fit/nccl_import.hpp"

namespace podsim::cli {
namespace {

void add_fit_command(CLI::App& calibrate) {
  struct Options {
    fit::DeviceFitRequest request;
    std::vector<std::string> sets;
  };
  auto opt = std::make_shared<Options>();
  fit::DeviceFitRequest& req = opt->request;
  CLI::App* cmd = calibrate.add_subcommand(
      "fit", "Fit a device's compute profile to calib-gemm and calib-memory measurements");
  cmd->add_option("gemm_csv", req.gemm_csv, "CSV written by calib-gemm")->required();
  cmd->add_option("memory_csv", req.memory_csv, "CSV written by calib-memory")->required();
  cmd->add_option("--device,-d", req.device, "Device name written into the profile, e.g. H200-SXM-141GB")
      ->required();
  cmd->add_option("--out,-o", req.out,
                  "Profile YAML to write, e.g. calibration/profiles/h200-sxm-141gb.yaml");
  cmd->add_option("--topology,-t", req.topology,
                  "Topology whose device section gives the datasheet peaks, HBM bandwidth, SM count and the "
                  "base profile");
  cmd->add_option("--set,-s", opt->sets,
                  "Override a topology key, e.g. --set topology.device.hbm_bandwidth_GBps=4800");
  cmd->add_option("--peak-tflops", req.peak_tflops,
                  "Datasheet dense peak per dtype, e.g. bf16=989 fp8=1979 (repeatable)");
  cmd->add_option("--hbm-GBps", req.hbm_GBps, "Datasheet HBM bandwidth in GB/s");
  cmd->add_option("--base", req.base,
                  "Profile whose tile list, split-K limit, framework memory and clock factor are kept "
                  "(default: the topology's device profile)");
  cmd->add_option("--precision", req.fitted_dtypes, "GEMM dtypes the main-loop efficiency is fitted to")
      ->delimiter(',');
  cmd->add_option("--holdout-every", req.holdout_every,
                  "Hold out every Nth measurement of each shape class to test prediction (0: none)")
      ->check(CLI::Range(0, 1000));
  cmd->footer(
      "Least squares on the relative error of every measured kernel time over the compute model's\n"
      "parameters: GEMM main-loop efficiency, tile feed intensity, per-wave overhead, per-kernel overhead\n"
      "and the achieved fraction of HBM bandwidth for memory-bound kernels. Prints the error per shape\n"
      "class for the final fit and for a fit that never saw every Nth shape (hold-out).\n"
      "Example:\n"
      "  podsim calibrate fit calibration/data/h200/gemm.csv calibration/data/h200/memory.csv \\\n"
      "      --device H200-SXM-141GB --topology topologies/dgx-h200-superpod.yaml -o "
      "calibration/profiles/h200.yaml");
  cmd->callback([opt] {
    std::vector<std::pair<std::string, std::string>> workload_sets;
    driver::split_sets(opt->sets, opt->request.topology_sets, workload_sets);
    auto calibration = fit::calibrate_device(opt->request);
    fmt::print("{}", fit::device_fit_report(calibration));
    if (!opt->request.out.empty()) {
      fit::write_device_profile(opt->request.out, calibration);
      fmt::print("wrote {}\n", opt->request.out);
    }
  });
}

void add_nccl_tests_command(CLI::App& calibrate) {
  struct Options {
    fit::NcclImportRequest request;
    std::vector<std::string> sets;
    std::string out;
  };
  auto opt = std::make_shared<Options>();
  fit::NcclImportRequest& req = opt->request;
  CLI::App* cmd = calibrate.add_subcommand(
      "nccl-tests", "Import NVIDIA nccl-tests logs (all_reduce_perf, ...) into a fabric profile");
  cmd->add_option("logs", req.logs, "nccl-tests output files")->required();
  cmd->add_option("--topology,-t", req.topology, "Topology the logs were measured on")->required();
  cmd->add_option("--set,-s", opt->sets, "Override a topology key, e.g. --set topology.nodes=2");
  cmd->add_option("--out,-o", opt->out, "Fabric profile YAML to write");
  cmd->add_option("--name", req.name, "Profile name (default: from the logs' GPUs and hosts)");
  cmd->add_option("--op", req.op,
                  "Collective, when neither the log nor its file name says (e.g. all_reduce)");
  cmd->add_option("--base", req.base,
                  "Profile whose values are kept for link classes the logs do not measure (default: the "
                  "topology's fabric profile)");
  cmd->footer(
      "Each log's ranks are placed on the topology as nccl-tests places them (servers filled in order); "
      "podsim\n"
      "plans the same collective and says which link class bounds it, what busbw 100% efficiency would give\n"
      "and how many algorithm steps pay latency. Fitted: link_efficiency per bounding class (large-message\n"
      "busbw / ideal busbw), step_latency_us per class and launch_latency_us (small-message times). Printed\n"
      "and written: latency and busbw per collective and size range, and podsim's error on each.\n"
      "Example:\n"
      "  podsim calibrate nccl-tests logs/all_reduce_perf.txt logs/all_gather_perf.txt \\\n"
      "      --topology topologies/dgx-a100-superpod.yaml -o calibration/profiles/nccl-mycluster.yaml");
  cmd->callback([opt] {
    std::vector<std::pair<std::string, std::string>> workload_sets;
    driver::split_sets(opt->sets, opt->request.topology_sets, workload_sets);
    auto import = fit::import_nccl_tests(opt->request);
    fmt::print("{}", fit::nccl_import_report(import));
    if (!opt->out.empty()) {
      fit::write_fabric_profile(opt->out, import);
      fmt::print("wrote {}\n", opt->out);
    }
  });
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  CLI::App* calibrate =
      app.add_subcommand("calibrate", "Turn microbenchmark measurements into calibration profiles");
  calibrate->require_subcommand(1);
  add_fit_command(*calibrate);
  add_nccl_tests_command(*calibrate);
}

}  // namespace podsim::cli
