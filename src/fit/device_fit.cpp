#include "podsim/fit/device_fit.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlopt.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "podsim/core/error.hpp"
#include "podsim/fit/least_squares.hpp"

namespace podsim::calibration {
namespace {

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// The fitted parameters in the optimizer's coordinates: similar magnitudes, and the tile intensity on a
// log scale because its effect is multiplicative.
struct Params {
  double mainloop_efficiency, log_tile_intensity, wave_overhead_us, kernel_overhead_us, memory_efficiency;
  static constexpr int size = 5;
  std::vector<double> vec() const {
    return {mainloop_efficiency, log_tile_intensity, wave_overhead_us, kernel_overhead_us, memory_efficiency};
  }
  static Params from(const double* x) { return {x[0], x[1], x[2], x[3], x[4]}; }
  DeviceProfile apply(DeviceProfile p) const {
    p.gemm.mainloop_efficiency = mainloop_efficiency;
    p.gemm.required_tile_intensity = std::exp(log_tile_intensity);
    p.gemm.wave_overhead_s = wave_overhead_us * 1e-6;
    p.kernel_overhead_s = kernel_overhead_us * 1e-6;
    p.memory_efficiency = memory_efficiency;
    p.clock_sustain_factor = 1;  // microbenchmarks run at the burst clock; see device_fit.hpp
    return p;
  }
};
const double kLower[Params::size] = {0.05, std::log(1.0), 0, 0, 0.05};
const double kUpper[Params::size] = {1.0, std::log(500.0), 20, 30, 1.0};

// One measurement the fit sees, with everything needed to evaluate the model on it.
struct Sample {
  std::string group;  // error-table key
  bool fitted = true;
  bool gemm = true;
  std::string dtype;
  GemmShape shape;
  double bytes = 0;
  double seconds = 0;
};

double model_seconds(const Sample& s, const DeviceProfile& p,
                     const std::map<std::string, DeviceRates>& rates) {
  const DeviceRates& r = rates.at(s.dtype);
  if (!s.gemm) return s.bytes / (r.hbm_bandwidth * p.memory_efficiency) + p.kernel_overhead_s;
  return ComputeModel(p, r).gemm(s.shape).seconds;
}

struct Problem {
  const std::vector<const Sample*>* samples;
  const DeviceProfile* base;
  const std::map<std::string, DeviceRates>* rates;
  int evaluations = 0;
};

// Mean squared log ratio model/measured: relative errors, symmetric in over- and under-prediction.
double objective(unsigned n, const double* x, double* grad, void* data) {
  auto* prob = static_cast<Problem*>(data);
  ++prob->evaluations;
  DeviceProfile p = Params::from(x).apply(*prob->base);
  double sum = 0;
  for (const Sample* s : *prob->samples) {
    double r = std::log(model_seconds(*s, p, *prob->rates) / s->seconds);
    sum += r * r;
  }
  return sum / prob->samples->size();
}

// Memory-op rows alone are linear in (1 / achieved bandwidth, kernel overhead): an exact starting point.
Params initial_guess(const std::vector<const Sample*>& samples, const DeviceProfile& base,
                     const std::map<std::string, DeviceRates>& rates) {
  Params start{base.gemm.mainloop_efficiency, std::log(base.gemm.required_tile_intensity),
               base.gemm.wave_overhead_s * 1e6, base.kernel_overhead_s * 1e6, base.memory_efficiency};
  std::vector<std::vector<double>> a;
  std::vector<double> b;
  for (const Sample* s : samples)
    if (!s->gemm) {
      a.push_back({s->bytes / rates.at(s->dtype).hbm_bandwidth / s->seconds, 1e-6 / s->seconds});
      b.push_back(1);
    }
  if (a.size() >= 2) {
    auto fit = nonnegative_least_squares(a, b);
    if (fit.identifiable && fit.x[0] > 0) {
      start.memory_efficiency = std::clamp(1 / fit.x[0], kLower[4], kUpper[4]);
      start.kernel_overhead_us = std::clamp(fit.x[1], kLower[3], kUpper[3]);
    }
  }
  return start;
}

Params fit(const std::vector<const Sample*>& samples, const DeviceProfile& base,
           const std::map<std::string, DeviceRates>& rates) {
  Problem prob{&samples, &base, &rates};
  Params guess = initial_guess(samples, base, rates);
  // The model is piecewise smooth (tile choice, waves, the roofline switch), so a derivative-free local
  // method from a few starting points: the guess, and efficiencies/overheads spread over their ranges.
  std::vector<std::vector<double>> starts = {guess.vec()};
  for (double e : {0.6, 0.9})
    for (double w : {0.5, 4.0}) {
      auto x = guess.vec();
      x[0] = e, x[2] = w;
      starts.push_back(x);
    }
  std::vector<double> best;
  double best_value = std::numeric_limits<double>::infinity();
  for (auto x : starts) {
    for (int i = 0; i < Params::size; ++i) x[i] = std::clamp(x[i], kLower[i], kUpper[i]);
    for (int round = 0; round < 2; ++round) {  // a restart escapes a collapsed simplex
      nlopt_opt opt = nlopt_create(NLOPT_LN_SBPLX, Params::size);
      nlopt_set_lower_bounds(opt, kLower);
      nlopt_set_upper_bounds(opt, kUpper);
      nlopt_set_min_objective(opt, objective, &prob);
      nlopt_set_xtol_rel(opt, 1e-7);
      nlopt_set_ftol_abs(opt, 1e-14);
      nlopt_set_maxeval(opt, 3000);
      double value = 0;
      nlopt_result status = nlopt_optimize(opt, x.data(), &value);
      nlopt_destroy(opt);
      if (status < 0) throw std::runtime_error(fmt::format("NLopt failed with status {}", int(status)));
      if (value < best_value) best_value = value, best = x;
    }
  }
  return Params::from(best.data());
}

// The GEMM rows as samples, and the burst/sustained rows apart (they measure the clock, not the model).
struct GemmSamples {
  std::vector<Sample> samples;
  std::map<std::string, double> burst, sustained;  // dtype + shape -> seconds
};

// Rows of a dtype without a datasheet peak cannot be modelled: an error if that dtype is fitted, else
// skipped with a note.
GemmSamples gemm_samples(const GemmMeasurements& gemm, const DeviceFitOptions& options,
                         DeviceFitResult& result) {
  GemmSamples out;
  std::map<std::string, int> skipped_dtypes;
  for (const auto& g : gemm.rows) {
    if (g.shape_class == "burst" || g.shape_class == "sustained") {
      auto key = fmt::format("{} {}x{}x{}", g.dtype, g.shape.m, g.shape.n, g.shape.k);
      (g.shape_class == "burst" ? out.burst : out.sustained)[key] = g.seconds;
      continue;
    }
    bool fitted = contains(options.fitted_dtypes, g.dtype);
    if (!options.rates.count(g.dtype)) {
      if (fitted)
        throw InputError(
            fmt::format("{}:{}: no datasheet peak for dtype '{}' (give it in the topology's "
                        "device.peak_tflops or with --peak-tflops {}=N)",
                        gemm.header.file, g.line, g.dtype, g.dtype));
      ++skipped_dtypes[g.dtype];
      continue;
    }
    Sample s;
    s.fitted = fitted;
    s.group =
        fitted ? "gemm " + g.shape_class : fmt::format("gemm {} {} (not fitted)", g.shape_class, g.dtype);
    s.dtype = g.dtype;
    s.shape = g.shape;
    s.seconds = g.seconds;
    out.samples.push_back(s);
  }
  for (const auto& [dtype, n] : skipped_dtypes)
    result.notes.push_back(fmt::format("{} {} GEMM rows skipped: no datasheet peak for {}", n, dtype, dtype));
  return out;
}

// The memory rows as samples; the largest size of each kernel also gives that kernel's efficiency.
void add_memory_samples(const MemoryMeasurements& memory, const DeviceFitOptions& options,
                        std::vector<Sample>& samples, DeviceFitResult& result) {
  std::string memory_dtype = options.rates.count(options.fitted_dtypes.front())
                                 ? options.fitted_dtypes.front()
                                 : options.rates.begin()->first;  // HBM bandwidth is the same for all
  std::map<std::string, double> largest;
  for (const auto& m : memory.rows) {
    Sample s;
    s.gemm = false;
    s.fitted = contains(options.memory_op_kernels, m.kernel);
    s.group = "memory " + m.kernel + (s.fitted ? "" : " (not fitted)");
    s.dtype = memory_dtype;
    s.bytes = m.bytes;
    s.seconds = m.seconds;
    samples.push_back(s);
    if (m.bytes >= largest[m.kernel]) {
      largest[m.kernel] = m.bytes;
      result.memory_kernel_efficiency[m.kernel] =
          m.bytes / m.seconds / options.rates.at(memory_dtype).hbm_bandwidth;
    }
  }
}

// The fit needs both kinds of rows: GEMMs pin the compute terms, memory ops the bandwidth and overhead.
void require_fitted_rows(const std::vector<Sample>& samples, const GemmMeasurements& gemm,
                         const MemoryMeasurements& memory, const DeviceFitOptions& options) {
  auto count_fitted = [&](bool want_gemm) {
    return std::count_if(samples.begin(), samples.end(),
                         [&](const Sample& s) { return s.fitted && s.gemm == want_gemm; });
  };
  if (count_fitted(true) == 0)
    throw InputError(fmt::format("{}: no GEMM rows of a fitted dtype ({}) to fit", gemm.header.file,
                                 fmt::join(options.fitted_dtypes, ", ")));
  if (count_fitted(false) == 0)
    throw InputError(fmt::format("{}: no rows of the memory-bound kernels the fit uses ({})",
                                 memory.header.file, fmt::join(options.memory_op_kernels, ", ")));
}

// A parameter on the bound of its range means the measurements wanted something unphysical: say so.
void note_parameters_at_bounds(const Params& params, DeviceFitResult& result) {
  for (int i = 0; i < Params::size; ++i) {
    double v = params.vec()[i];
    const char* names[] = {"gemm.mainloop_efficiency", "gemm.required_tile_intensity", "gemm.wave_overhead",
                           "kernel_overhead", "memory.bandwidth_efficiency"};
    if (std::fabs(v - kLower[i]) < 1e-6 * (1 + std::fabs(kLower[i])) ||
        std::fabs(v - kUpper[i]) < 1e-6 * (1 + std::fabs(kUpper[i])))
      result.notes.push_back(fmt::format(
          "{} ended at the bound of its range: the measurements push it beyond what is physical (check the "
          "datasheet peaks, or whether the shapes exercise it)",
          names[i]));
  }
}

// Burst vs sustained: the ratio of the same GEMM's time early and after minutes of load.
void fit_clock_sustain(const GemmSamples& g, const DeviceProfile& base, const std::string& gemm_file,
                       DeviceProfile& fitted, DeviceFitResult& result) {
  std::vector<double> ratios;
  for (const auto& [key, t] : g.burst)
    if (g.sustained.count(key)) ratios.push_back(std::min(1.0, t / g.sustained.at(key)));
  if (!ratios.empty()) {
    double mean = 0;
    for (double r : ratios) mean += r / ratios.size();
    result.measured_clock_sustain = mean;
    fitted.clock_sustain_factor = mean;
  } else {
    fitted.clock_sustain_factor = base.clock_sustain_factor;
    result.notes.push_back(
        fmt::format("clock_sustain_factor kept at {} from the base profile (no burst/sustained rows in {})",
                    base.clock_sustain_factor, gemm_file));
  }
}

}  // namespace

DeviceFitResult fit_device_profile(const GemmMeasurements& gemm, const MemoryMeasurements& memory,
                                   const DeviceProfile& base, const DeviceFitOptions& options) {
  DeviceFitResult result;
  GemmSamples g = gemm_samples(gemm, options, result);
  std::vector<Sample>& samples = g.samples;
  if (options.rates.empty()) throw std::logic_error("fit_device_profile: no rates");
  add_memory_samples(memory, options, samples, result);
  require_fitted_rows(samples, gemm, memory, options);

  // Hold-out: every Nth fitted row of each class (from the middle of each stride, so the smallest and
  // largest shapes of a sweep stay in the training set) is predicted by a fit that never saw it.
  std::vector<const Sample*> train, held, all;
  std::map<std::string, int> seen;
  for (const auto& s : samples) {
    if (!s.fitted) continue;
    all.push_back(&s);
    int j = seen[s.group]++;
    bool hold = options.holdout_every > 1 && j % options.holdout_every == options.holdout_every / 2;
    (hold ? held : train).push_back(&s);
  }
  if (!held.empty()) {
    DeviceProfile p = fit(train, base, options.rates).apply(base);
    for (const Sample* s : held)
      result.holdout[s->group].add(relative_error(model_seconds(*s, p, options.rates), s->seconds));
    result.holdout_rows = static_cast<int>(held.size());
  }
  Params final_params = fit(all, base, options.rates);
  DeviceProfile fitted = final_params.apply(base);
  for (const auto& s : samples)
    result.in_sample[s.group].add(relative_error(model_seconds(s, fitted, options.rates), s.seconds));
  result.fitted_rows = static_cast<int>(all.size());

  note_parameters_at_bounds(final_params, result);
  fit_clock_sustain(g, base, gemm.header.file, fitted, result);
  result.profile = fitted;
  return result;
}

}  // namespace podsim::calibration
