#include "podsim/fit/device_calibration.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "podsim/core/error.hpp"
#include "podsim/fit/error_text.hpp"
#include "podsim/fit/profile_output.hpp"
#include "podsim/fit/profile_writer.hpp"
#include "podsim/topology/loader.hpp"

namespace podsim::fit {
namespace {

// What the fit needs to know about the device besides its measurements.
struct Datasheet {
  std::map<std::string, double> peaks;  // dense peak flop/s per dtype
  double hbm_bandwidth = 0;             // bytes/s
  int sm_count = 0;
  calibration::DeviceProfile base;  // values the fit does not touch come from here
  std::string base_file;            // "" = podsim's built-in defaults
};

calibration::DeviceProfile builtin_base() {
  calibration::DeviceProfile base;
  base.gemm.tiles = {{256, 128}, {128, 256}, {128, 128}, {256, 64},
                     {64, 256},  {128, 64},  {64, 128},  {64, 64}};
  base.provenance = {{"prior", "podsim's built-in defaults", "no base profile was given"}};
  return base;
}

// The topology's device section, then the flags, which win.
Datasheet read_datasheet(const DeviceFitRequest& req) {
  Datasheet d;
  d.base = builtin_base();
  if (!req.topology.empty()) {
    auto topo = topology::load_topology(req.topology, req.topology_sets);
    for (const auto& [p, v] : topo.device.peak_flops) d.peaks[topology::to_string(p)] = v;
    d.hbm_bandwidth = topo.device.hbm_bandwidth;
    d.sm_count = topo.device.sm_count;
    d.base = topo.device_profile;
    d.base_file = topo.device.profile_path;
  }
  for (const auto& [k, v] : parse_peak_tflops(req.peak_tflops)) d.peaks[k] = v;
  if (req.hbm_GBps > 0) d.hbm_bandwidth = req.hbm_GBps * 1e9;
  if (!req.base.empty()) {
    d.base = calibration::load_device_profile(req.base);
    d.base_file = req.base;
  }
  return d;
}

// calib-gemm records the SM count of the device it ran on; it must be the topology's (a profile fitted on
// another device would be silently wrong), and it fills in the count when no topology gives one.
void apply_measured_sm_count(const calibration::GemmMeasurements& gemm, const std::string& file,
                             Datasheet& d) {
  std::string csv_sms = gemm.header.get("sm_count");
  if (csv_sms.empty()) return;
  int n = 0;
  try {
    n = std::stoi(csv_sms);
  } catch (const std::exception&) {
  }
  if (n <= 0)
    throw InputError(
        fmt::format("{}: header field sm_count: expected a whole number, got '{}'", file, csv_sms));
  if (d.sm_count > 0 && n != d.sm_count)
    throw InputError(
        fmt::format("{}: measured on a device with {} SMs, but the topology's device has {}: "
                    "is --topology the machine that was measured?",
                    file, n, d.sm_count));
  d.sm_count = n;
}

calibration::DeviceFitOptions fit_options(const DeviceFitRequest& req, const Datasheet& d) {
  calibration::DeviceFitOptions fo;
  fo.fitted_dtypes = req.fitted_dtypes;
  fo.holdout_every = req.holdout_every;
  for (const auto& [dtype, peak] : d.peaks) {
    calibration::DeviceRates r;
    r.peak_flops = peak;
    r.hbm_bandwidth = d.hbm_bandwidth;
    r.sm_count = d.sm_count;
    // Every key is a valid precision: the topology's come from Precision, the flags' are checked.
    r.element_bytes = topology::bytes_per_element(topology::parse_precision(dtype));
    fo.rates[dtype] = r;
  }
  return fo;
}

std::string machine_text(const calibration::GemmMeasurements& gemm, int sm_count) {
  return fmt::format("{} on {} ({} SMs, driver {}, CUDA runtime {}, cuBLASLt {})",
                     gemm.header.get("device", "unknown device"), gemm.header.get("host", "unknown host"),
                     sm_count, gemm.header.get("driver", "?"), gemm.header.get("cuda_runtime", "?"),
                     gemm.header.get("cublaslt", "?"));
}

// Where each value of the profile comes from: the measurement (or, for the synthetic example data, a
// prior that says so), the burst/sustained pair, and the base profile for what was not fitted.
std::vector<calibration::Provenance> device_provenance(const DeviceCalibration& c,
                                                       const calibration::GemmMeasurements& gemm,
                                                       const calibration::MemoryMeasurements& memory,
                                                       const Datasheet& d) {
  const auto& req = c.request;
  const auto& result = c.fit;
  std::string command = command_line("fit", {req.gemm_csv, req.memory_csv, "--device " + req.device,
                                             req.topology.empty() ? "" : "--topology " + req.topology,
                                             req.out.empty() ? "" : "-o " + req.out});
  calibration::ErrorSummary in_total = fitted_total(result.in_sample),
                            out_total = fitted_total(result.holdout);
  // Example data (tests/data/calib) says so in its header; the profile must not call it a measurement.
  std::string synthetic = gemm.header.get("synthetic", memory.header.get("synthetic"));
  std::string kind = synthetic.empty() ? "measured" : "prior";
  std::vector<calibration::Provenance> prov;
  prov.push_back(
      {kind,
       fmt::format("{}{}: calib-gemm {} (measured {}), calib-memory {} (measured {}); {}; fitted {}",
                   synthetic.empty() ? "" : "NOT A MEASUREMENT (synthetic input: " + synthetic + "); ",
                   command, req.gemm_csv, gemm.header.get("date", "date not recorded"), req.memory_csv,
                   memory.header.get("date", "date not recorded"), c.machine, today_utc()),
       fmt::format("gemm.mainloop_efficiency, required_tile_intensity, wave_overhead_us, "
                   "kernel_overhead_us, memory.bandwidth_efficiency fitted over {} kernels (mean "
                   "|error| {}%, max {}%); held out every {}th shape: {} predicted with mean |error| "
                   "{}% (max {}%); per class: {}",
                   result.fitted_rows, pct(in_total.mean_abs), pct(in_total.max_abs), req.holdout_every,
                   result.holdout_rows, pct(out_total.mean_abs), pct(out_total.max_abs),
                   error_summary_text(result.in_sample, true))});
  if (result.measured_clock_sustain)
    prov.push_back({kind, fmt::format("{} (burst vs sustained rows of {})", command, req.gemm_csv),
                    "clock_sustain_factor = burst time / sustained time of the same GEMM"});
  std::string kept = "tiles, max_split_k, framework_memory_GiB";
  if (!result.measured_clock_sustain) kept += ", clock_sustain_factor";
  std::string base_kind = "derived";
  for (const auto& bp : d.base.provenance)
    if (bp.kind == "prior") base_kind = "prior";
  prov.push_back({base_kind, d.base_file.empty() ? "podsim's built-in defaults" : d.base_file,
                  "kept from the base profile (its provenance says where they come from): " + kept});
  return prov;
}

}  // namespace

std::map<std::string, double> parse_peak_tflops(const std::vector<std::string>& items) {
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
    std::string dtype = item.substr(0, eq);
    try {
      topology::parse_precision(dtype);
    } catch (const std::invalid_argument& e) {
      throw InputError(fmt::format("--peak-tflops {}: {}", item, e.what()));
    }
    out[dtype] = v * 1e12;
  }
  return out;
}

DeviceCalibration calibrate_device(const DeviceFitRequest& req) {
  auto gemm = calibration::read_gemm_measurements(req.gemm_csv);
  auto memory = calibration::read_memory_measurements(req.memory_csv);
  Datasheet d = read_datasheet(req);
  apply_measured_sm_count(gemm, req.gemm_csv, d);
  if (d.peaks.empty() || d.hbm_bandwidth <= 0 || d.sm_count <= 0)
    throw InputError(
        "calibrate fit needs the datasheet peaks, HBM bandwidth and SM count: give --topology T.yaml, or "
        "--peak-tflops DTYPE=N and --hbm-GBps N (the SM count comes from the CSV header)");

  DeviceCalibration c;
  c.request = req;
  c.fit = calibration::fit_device_profile(gemm, memory, d.base, fit_options(req, d));
  c.fit.profile.device = req.device;
  c.machine = machine_text(gemm, d.sm_count);
  c.gemm_rows = gemm.rows.size();
  c.memory_rows = memory.rows.size();
  c.fit.profile.provenance = device_provenance(c, gemm, memory, d);
  return c;
}

void write_device_profile(const std::string& path, const DeviceCalibration& c) {
  write_checked(
      path,
      calibration::device_profile_yaml(
          c.fit.profile, {fmt::format("Compute calibration of {}, fitted by podsim calibrate fit on {}.",
                                      c.request.device, today_utc()),
                          "Measured with calibration/ microbenchmarks; see provenance for the machine "
                          "and the fit error."}),
      [](const std::string& f) { calibration::load_device_profile(f); });
}

}  // namespace podsim::fit
