// podsim calibrate: turns microbenchmark measurements into calibration profiles.
//   fit         calib-gemm + calib-memory CSVs -> device compute profile
//   nccl-tests  nccl-tests logs -> fabric (collective) profile
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "podsim/calibration/device_fit.hpp"
#include "podsim/calibration/fabric_fit.hpp"
#include "podsim/calibration/profile_writer.hpp"
#include "podsim/cli/collective_geometry.hpp"
#include "podsim/cli/commands.hpp"
#include "podsim/cli/simulation.hpp"
#include "podsim/core/error.hpp"
#include "podsim/report/writers.hpp"
#include "podsim/topology/loader.hpp"

namespace podsim::cli {
namespace {

std::string today_utc() {
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&now));
  return buf;
}

// The command as a user would retype it (for provenance): the subcommand, its inputs and its options.
std::string command_line(const std::string& sub, const std::vector<std::string>& words) {
  std::string out = "podsim calibrate " + sub;
  for (const auto& w : words)
    if (!w.empty()) out += " " + w;
  return out;
}

// Writes a profile only after checking that podsim loads it back (through the real loader).
template <typename Loader>
void write_checked(const std::string& path, const std::string& yaml, Loader load) {
  if (auto dir = std::filesystem::path(path).parent_path(); !dir.empty())
    std::filesystem::create_directories(dir);
  std::string tmp = path + ".check.yaml";
  report::atomic_write(tmp, yaml);
  try {
    load(tmp);
  } catch (...) {
    std::filesystem::remove(tmp);
    throw;
  }
  std::filesystem::rename(tmp, path);
}

std::string pct(double v) {
  return fmt::format("{:.1f}", 100 * v);
}

std::string error_cell(const calibration::ErrorTable& table, const std::string& key, bool with_bias) {
  auto it = table.find(key);
  if (it == table.end())
    return fmt::format("{:>5} {:>10} {:>9}{}", "-", "-", "-", with_bias ? fmt::format(" {:>6}", "-") : "");
  const auto& e = it->second;
  return fmt::format("{:>5} {:>10} {:>9}{}", e.count, pct(e.mean_abs), pct(e.max_abs),
                     with_bias ? fmt::format(" {:>+6.1f}", 100 * e.bias) : "");
}

std::string summary_text(const calibration::ErrorTable& table, bool fitted_only) {
  std::string out;
  for (const auto& [key, e] : table) {
    if (fitted_only && key.find("not fitted") != std::string::npos) continue;
    out += fmt::format("{}{} {}%", out.empty() ? "" : ", ", key, pct(e.mean_abs));
  }
  return out;
}

calibration::ErrorSummary total(const calibration::ErrorTable& table) {
  calibration::ErrorSummary t;
  for (const auto& [key, e] : table) {
    if (key.find("not fitted") != std::string::npos) continue;
    t.mean_abs = (t.mean_abs * t.count + e.mean_abs * e.count) / std::max(1, t.count + e.count);
    t.count += e.count;
    t.max_abs = std::max(t.max_abs, e.max_abs);
  }
  return t;
}

std::map<std::string, double> parse_peaks(const std::vector<std::string>& items) {
  std::map<std::string, double> out;
  for (const auto& item : items) {
    auto eq = item.find('=');
    double v = 0;
    size_t pos = 0;
    try {
      if (eq != std::string::npos) v = std::stod(item.substr(eq + 1), &pos);
    } catch (const std::exception&) {
      pos = 0;
    }
    if (eq == std::string::npos || pos == 0 || pos != item.size() - eq - 1 || !(v > 0))
      throw InputError(fmt::format("--peak-tflops {}: expected DTYPE=TFLOPS, e.g. bf16=989", item));
    out[item.substr(0, eq)] = v * 1e12;
  }
  return out;
}

void add_fit_command(CLI::App& calibrate) {
  struct Options {
    std::string gemm, memory, device, out, topology, base;
    std::vector<std::string> sets, peaks, fitted = {"bf16", "fp16"};
    double hbm_GBps = 0;
    int holdout_every = 5;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = calibrate.add_subcommand(
      "fit", "Fit a device's compute profile to calib-gemm and calib-memory measurements");
  cmd->add_option("gemm_csv", opt->gemm, "CSV written by calib-gemm")->required();
  cmd->add_option("memory_csv", opt->memory, "CSV written by calib-memory")->required();
  cmd->add_option("--device,-d", opt->device, "Device name written into the profile, e.g. H200-SXM-141GB")
      ->required();
  cmd->add_option("--out,-o", opt->out,
                  "Profile YAML to write, e.g. calibration/profiles/h200-sxm-141gb.yaml");
  cmd->add_option("--topology,-t", opt->topology,
                  "Topology whose device section gives the datasheet peaks, HBM bandwidth, SM count and the "
                  "base profile");
  cmd->add_option("--set,-s", opt->sets,
                  "Override a topology key, e.g. --set topology.device.hbm_bandwidth_GBps=4800");
  cmd->add_option("--peak-tflops", opt->peaks,
                  "Datasheet dense peak per dtype, e.g. bf16=989 fp8=1979 (repeatable)");
  cmd->add_option("--hbm-GBps", opt->hbm_GBps, "Datasheet HBM bandwidth in GB/s");
  cmd->add_option("--base", opt->base,
                  "Profile whose tile list, split-K limit, framework memory and clock factor are kept "
                  "(default: the topology's device profile)");
  cmd->add_option("--precision", opt->fitted, "GEMM dtypes the main-loop efficiency is fitted to")
      ->delimiter(',');
  cmd->add_option("--holdout-every", opt->holdout_every,
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
    std::vector<std::pair<std::string, std::string>> t, w;
    split_sets(opt->sets, t, w);
    auto gemm = calibration::read_gemm_measurements(opt->gemm);
    auto memory = calibration::read_memory_measurements(opt->memory);

    // Datasheet facts: the topology's device section, then the flags.
    std::map<std::string, double> peaks;
    double hbm = 0;
    int sms = 0;
    calibration::DeviceProfile base;
    base.gemm.tiles = {{256, 128}, {128, 256}, {128, 128}, {256, 64},
                       {64, 256},  {128, 64},  {64, 128},  {64, 64}};
    base.provenance = {{"prior", "podsim's built-in defaults", "no base profile was given"}};
    std::string base_file;
    if (!opt->topology.empty()) {
      auto topo = topology::load_topology(opt->topology, t);
      for (const auto& [p, v] : topo.device.peak_flops) peaks[topology::to_string(p)] = v;
      hbm = topo.device.hbm_bandwidth;
      sms = topo.device.sm_count;
      base = topo.device_profile;
      base_file = topo.device.profile_path;
    }
    for (const auto& [k, v] : parse_peaks(opt->peaks)) peaks[k] = v;
    if (opt->hbm_GBps > 0) hbm = opt->hbm_GBps * 1e9;
    if (!opt->base.empty()) {
      base = calibration::load_device_profile(opt->base);
      base_file = opt->base;
    }
    std::string csv_sms = gemm.header.get("sm_count");
    if (!csv_sms.empty()) {
      int n = 0;
      try {
        n = std::stoi(csv_sms);
      } catch (const std::exception&) {
      }
      if (n <= 0)
        throw InputError(
            fmt::format("{}: header field sm_count: expected a whole number, got '{}'", opt->gemm, csv_sms));
      if (sms > 0 && n != sms)
        throw InputError(
            fmt::format("{}: measured on a device with {} SMs, but the topology's device has {}: "
                        "is --topology the machine that was measured?",
                        opt->gemm, n, sms));
      sms = n;
    }
    if (peaks.empty() || hbm <= 0 || sms <= 0)
      throw InputError(
          "calibrate fit needs the datasheet peaks, HBM bandwidth and SM count: give --topology T.yaml, or "
          "--peak-tflops DTYPE=N and --hbm-GBps N (the SM count comes from the CSV header)");

    calibration::DeviceFitOptions fo;
    fo.fitted_dtypes = opt->fitted;
    fo.holdout_every = opt->holdout_every;
    for (const auto& [dtype, peak] : peaks) {
      calibration::DeviceRates r;
      r.peak_flops = peak;
      r.hbm_bandwidth = hbm;
      r.sm_count = sms;
      r.element_bytes = dtype == "fp8" ? 1 : dtype == "fp32" || dtype == "tf32" ? 4 : 2;
      fo.rates[dtype] = r;
    }
    auto result = calibration::fit_device_profile(gemm, memory, base, fo);
    auto& p = result.profile;
    p.device = opt->device;

    std::string machine =
        fmt::format("{} on {} ({} SMs, driver {}, CUDA runtime {}, cuBLASLt {})",
                    gemm.header.get("device", "unknown device"), gemm.header.get("host", "unknown host"), sms,
                    gemm.header.get("driver", "?"), gemm.header.get("cuda_runtime", "?"),
                    gemm.header.get("cublaslt", "?"));
    std::string command = command_line("fit", {opt->gemm, opt->memory, "--device " + opt->device,
                                               opt->topology.empty() ? "" : "--topology " + opt->topology,
                                               opt->out.empty() ? "" : "-o " + opt->out});
    calibration::ErrorSummary in_total = total(result.in_sample), out_total = total(result.holdout);
    std::vector<calibration::Provenance> prov;
    // Example data (tests/data/calib) says so in its header; the profile must not call it a measurement.
    std::string synthetic = gemm.header.get("synthetic", memory.header.get("synthetic"));
    prov.push_back(
        {synthetic.empty() ? "measured" : "prior",
         fmt::format("{}{}: calib-gemm {} (measured {}), calib-memory {} (measured {}); {}; fitted {}",
                     synthetic.empty() ? "" : "NOT A MEASUREMENT (synthetic input: " + synthetic + "); ",
                     command, opt->gemm, gemm.header.get("date", "date not recorded"), opt->memory,
                     memory.header.get("date", "date not recorded"), machine, today_utc()),
         fmt::format("gemm.mainloop_efficiency, required_tile_intensity, wave_overhead_us, "
                     "kernel_overhead_us, memory.bandwidth_efficiency fitted over {} kernels (mean "
                     "|error| {}%, max {}%); held out every {}th shape: {} predicted with mean |error| "
                     "{}% (max {}%); per class: {}",
                     result.fitted_rows, pct(in_total.mean_abs), pct(in_total.max_abs), opt->holdout_every,
                     result.holdout_rows, pct(out_total.mean_abs), pct(out_total.max_abs),
                     summary_text(result.in_sample, true))});
    if (result.measured_clock_sustain)
      prov.push_back({synthetic.empty() ? "measured" : "prior",
                      fmt::format("{} (burst vs sustained rows of {})", command, opt->gemm),
                      "clock_sustain_factor = burst time / sustained time of the same GEMM"});
    std::string kept = "tiles, max_split_k, framework_memory_GiB";
    if (!result.measured_clock_sustain) kept += ", clock_sustain_factor";
    std::string base_kind = "derived";
    for (const auto& bp : base.provenance)
      if (bp.kind == "prior") base_kind = "prior";
    prov.push_back({base_kind, base_file.empty() ? "podsim's built-in defaults" : base_file,
                    "kept from the base profile (its provenance says where they come from): " + kept});
    p.provenance = prov;

    // Report.
    std::printf("podsim calibrate fit: %s\n", machine.c_str());
    std::printf("  %zu GEMM rows from %s, %zu memory rows from %s\n", gemm.rows.size(), opt->gemm.c_str(),
                memory.rows.size(), opt->memory.c_str());
    std::printf("fitted parameters:\n");
    std::printf("  %-42s %8.3f\n", "gemm.mainloop_efficiency", p.gemm.mainloop_efficiency);
    std::printf("  %-42s %8.1f\n", "gemm.required_tile_intensity_flop_per_byte",
                p.gemm.required_tile_intensity);
    std::printf("  %-42s %8.2f\n", "gemm.wave_overhead_us", p.gemm.wave_overhead_s * 1e6);
    std::printf("  %-42s %8.2f\n", "kernel_overhead_us", p.kernel_overhead_s * 1e6);
    std::printf("  %-42s %8.3f\n", "memory.bandwidth_efficiency", p.memory_efficiency);
    std::printf("  %-42s %8.3f  (%s)\n", "clock_sustain_factor", p.clock_sustain_factor,
                result.measured_clock_sustain ? "measured: burst / sustained" : "kept from the base profile");
    std::printf("memory kernels at their largest size (achieved / datasheet HBM bandwidth):\n");
    for (const auto& [k, e] : result.memory_kernel_efficiency)
      std::printf("  %-20s %6.1f%%\n", k.c_str(), 100 * e);
    std::printf("model error per class (model time vs measured; bias > 0: model slower)\n");
    std::printf("  %-40s %5s %10s %9s %6s | %-27s\n", "", "", "all rows", "", "",
                "held out (fit without them)");
    std::printf("  %-40s %5s %10s %9s %6s | %5s %10s %9s\n", "class", "rows", "mean|err|%", "max|err|%",
                "bias%", "rows", "mean|err|%", "max|err|%");
    for (const auto& [key, e] : result.in_sample)
      std::printf("  %-40s %s | %s\n", key.c_str(), error_cell(result.in_sample, key, true).c_str(),
                  error_cell(result.holdout, key, false).c_str());
    std::printf("  %-40s %5d %10s %9s %6s | %5d %10s %9s\n", "all fitted classes", in_total.count,
                pct(in_total.mean_abs).c_str(), pct(in_total.max_abs).c_str(), "", out_total.count,
                pct(out_total.mean_abs).c_str(), pct(out_total.max_abs).c_str());
    for (const auto& n : result.notes) std::printf("note: %s\n", n.c_str());
    if (!opt->out.empty()) {
      write_checked(opt->out,
                    calibration::device_profile_yaml(
                        p, {fmt::format("Compute calibration of {}, fitted by podsim calibrate fit on {}.",
                                        opt->device, today_utc()),
                            "Measured with calibration/ microbenchmarks; see provenance for the machine and "
                            "the fit error."}),
                    [](const std::string& f) { calibration::load_device_profile(f); });
      std::printf("wrote %s\n", opt->out.c_str());
    }
  });
}

void add_nccl_tests_command(CLI::App& calibrate) {
  struct Options {
    std::vector<std::string> logs, sets;
    std::string topology, out, name, op, base;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = calibrate.add_subcommand(
      "nccl-tests", "Import NVIDIA nccl-tests logs (all_reduce_perf, ...) into a fabric profile");
  cmd->add_option("logs", opt->logs, "nccl-tests output files")->required();
  cmd->add_option("--topology,-t", opt->topology, "Topology the logs were measured on")->required();
  cmd->add_option("--set,-s", opt->sets, "Override a topology key, e.g. --set topology.nodes=2");
  cmd->add_option("--out,-o", opt->out, "Fabric profile YAML to write");
  cmd->add_option("--name", opt->name, "Profile name (default: from the logs' GPUs and hosts)");
  cmd->add_option("--op", opt->op,
                  "Collective, when neither the log nor its file name says (e.g. all_reduce)");
  cmd->add_option("--base", opt->base,
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
    std::vector<std::pair<std::string, std::string>> t, w;
    split_sets(opt->sets, t, w);
    auto topo = topology::load_topology(opt->topology, t);
    calibration::FabricProfile base =
        opt->base.empty() ? topo.fabric_profile : calibration::load_fabric_profile(opt->base);

    std::vector<calibration::NcclTestsLog> logs;
    for (const auto& f : opt->logs)
      for (auto& log : calibration::read_nccl_tests_log(f, opt->op)) logs.push_back(std::move(log));
    std::vector<network::Collective> collectives;
    std::vector<calibration::CollectiveGeometry> geometry;
    for (const auto& log : logs) {
      collectives.push_back(measured_collective(topo, log));
      geometry.push_back(collective_geometry(topo, collectives.back()));
    }
    calibration::FabricFitOptions fo;
    fo.name = opt->name;
    auto result = calibration::fit_fabric_profile(
        logs, geometry, base, fo, [&](size_t i, double bytes, const calibration::FabricProfile& p) {
          auto c = collectives[i];
          c.bytes = bytes;
          return predicted_collective_time(topo, p, c);
        });
    auto& p = result.profile;

    std::string tested;
    for (const auto& log : logs)
      tested +=
          fmt::format("{}{}:{} {} ({}, {} ranks on {} host(s), {}{})", tested.empty() ? "" : "; ", log.file,
                      log.first_line, log.program.empty() ? log.op : log.program, log.device, log.ranks,
                      log.nodes, log.hosts.empty() ? "?" : log.hosts.front() + (log.nodes > 1 ? ", ..." : ""),
                      log.version.empty() ? "" : ", " + log.version);
    // Test data written in nccl-tests' format says so in a comment; the profile must not call it measured.
    bool synthetic = false;
    for (const auto& f : opt->logs) {
      std::ifstream in(f);
      std::string first;
      std::getline(in, first);
      synthetic = synthetic || first.find("not a measurement") != std::string::npos;
    }
    std::vector<calibration::Provenance> prov;
    prov.push_back(
        {synthetic ? "prior" : "measured",
         fmt::format("{}{}; imported {}; logs: {}", synthetic ? "NOT A MEASUREMENT (test data); " : "",
                     command_line("nccl-tests", {fmt::format("{}", fmt::join(opt->logs, " ")),
                                                 "--topology " + opt->topology}),
                     today_utc(), tested),
         result.notes.front() + " (interpreted on " + opt->topology + ")"});
    std::string base_kind = "derived";
    for (const auto& bp : base.provenance)
      if (bp.kind == "prior") base_kind = "prior";
    prov.push_back({base_kind, base.file.empty() ? "base profile" : base.file,
                    "kept from the base profile for what the logs do not measure (its provenance says where "
                    "they come from)"});
    p.provenance = prov;

    std::printf("podsim calibrate nccl-tests: %zu test(s) from %zu log(s), interpreted on %s\n", logs.size(),
                opt->logs.size(), topo.name.c_str());
    auto label = [](const calibration::CollectiveFit& c) {
      return fmt::format("{} {}x ({}:{})", c.log->op, c.log->ranks,
                         std::filesystem::path(c.log->file).filename().string(), c.log->first_line);
    };
    size_t width = 4;
    for (const auto& c : result.collectives) width = std::max(width, label(c).size());
    std::printf("  %-*s %5s  %-11s %11s %16s %10s %11s %10s\n", int(width), "test", "hosts", "bound by",
                "ideal(GB/s)", "peak busbw(GB/s)", "efficiency", "latency(us)", "podsim err");
    for (const auto& c : result.collectives) {
      std::string eff = c.efficiency > 0 ? fmt::format("{:.3f}", c.efficiency) : "-";
      std::string lat = c.latency > 0 ? fmt::format("{:.2f}", c.latency * 1e6) : "-";
      double peak = 0;
      for (const auto& r : c.ranges) peak = std::max(peak, r.summary.peak_busbw);
      std::printf("  %-*s %5d  %-11s %11.1f %16.1f %10s %11s %9s%%\n", int(width), label(c).c_str(),
                  c.log->nodes, c.geometry.bandwidth_class.c_str(), c.geometry.ideal_busbw / 1e9, peak / 1e9,
                  eff.c_str(), lat.c_str(), pct(c.model_error.mean_abs).c_str());
    }
    std::printf(
        "per size range (latency = fitted time at zero size, busbw = fitted bus bandwidth in the range):\n");
    std::printf("  %-18s %-22s %11s %11s %16s  %-11s %10s\n", "test", "sizes", "latency(us)", "busbw(GB/s)",
                "peak busbw(GB/s)", "bound by", "podsim err");
    auto size = [](double b) {
      return b >= 1 << 30   ? fmt::format("{:g} GiB", b / (1 << 30))
             : b >= 1 << 20 ? fmt::format("{:g} MiB", b / (1 << 20))
             : b >= 1 << 10 ? fmt::format("{:g} KiB", b / (1 << 10))
                            : fmt::format("{:g} B", b);
    };
    for (const auto& c : result.collectives)
      for (const auto& r : c.ranges) {
        std::string test = fmt::format("{} {}x", c.log->op, c.log->ranks);
        std::string sizes = size(r.summary.from_bytes) + " - " + size(r.summary.to_bytes);
        std::printf("  %-18s %-22s %11.2f %11.1f %16.1f  %-11s %9s%%\n", test.c_str(), sizes.c_str(),
                    r.summary.latency * 1e6, r.summary.busbw / 1e9, r.summary.peak_busbw / 1e9,
                    r.summary.bound_by.c_str(), pct(r.model_error.mean_abs).c_str());
      }
    std::printf("profile:\n");
    for (const auto& [cls, e] : p.link_efficiency)
      std::printf("  link_efficiency.%-12s %8.3f\n", cls.c_str(), e);
    for (const auto& [cls, s] : p.step_latency)
      std::printf("  step_latency_us.%-12s %8.3f\n", cls.c_str(), s * 1e6);
    std::printf("  %-28s %8.2f\n", "launch_latency_us", p.launch_latency * 1e6);
    for (const auto& n : result.notes) std::printf("note: %s\n", n.c_str());
    if (!opt->out.empty()) {
      write_checked(
          opt->out,
          calibration::fabric_profile_yaml(
              p, {fmt::format("{}: imported from nccl-tests logs by podsim calibrate nccl-tests on {}.",
                              p.name, today_utc()),
                  "See provenance for the logs and what was fitted or kept."}),
          [](const std::string& f) { calibration::load_fabric_profile(f); });
      std::printf("wrote %s\n", opt->out.c_str());
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
