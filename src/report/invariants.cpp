#include "podsim/report/invariants.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "podsim/core/error.hpp"

namespace podsim::report {
namespace {

// a <= b up to the relative tolerance of b (both are sums or ratios of floating-point figures).
bool at_most(double a, double b, double tolerance = kInvariantTolerance) {
  return a <= b + tolerance * std::max(std::abs(a), std::abs(b));
}
bool close(double a, double b, double tolerance = kInvariantTolerance) {
  return std::abs(a - b) <= tolerance * std::max({std::abs(a), std::abs(b), 1e-300});
}

class Checker {
 public:
  explicit Checker(std::vector<std::string>& out) : out_(out) {}

  template <typename... Args>
  void fail(const char* invariant, fmt::format_string<Args...> format, Args&&... args) {
    out_.push_back(fmt::format("{}: {}", invariant, fmt::format(format, std::forward<Args>(args)...)));
  }
  // Finite and >= 0; returns whether it was.
  bool sound(const std::string& what, double v) {
    if (std::isfinite(v) && v >= 0) return true;
    fail("finite", "{} = {} (must be finite and non-negative)", what, v);
    return false;
  }

 private:
  std::vector<std::string>& out_;
};

void check_numbers(const RunResult& r, Checker& c) {
  const auto& p = r.plan;
  c.sound("step time (s)", r.step_time());
  c.sound("executed FLOPs per step", p.hardware_flops);
  c.sound("model FLOPs per step", p.model_flops);
  c.sound("peak FLOP/s per device", p.peak_flops);
  c.sound("tokens per step", p.tokens_per_step);
  c.sound("samples per step", p.samples_per_step);
  for (size_t i = 0; i < p.memory.size(); ++i) {
    const auto& m = p.memory[i];
    for (auto [name, v] : {std::pair{"weights", m.weights},
                           {"gradients", m.gradients},
                           {"optimizer", m.optimizer},
                           {"activations", m.activations},
                           {"buffers", m.buffers},
                           {"framework", m.framework}})
      c.sound(fmt::format("lane {} {} memory (bytes)", i, name), v);
  }
  for (const auto& kernel : p.kernels) {
    c.sound(fmt::format("kernel '{}' seconds", kernel.name), kernel.seconds);
    c.sound(fmt::format("kernel '{}' FLOPs", kernel.name), kernel.flops);
    c.sound(fmt::format("kernel '{}' bytes", kernel.name), kernel.bytes);
  }
}

void check_devices(const RunResult& r, const topology::Topology& topo, Checker& c) {
  int available = topo.compute_device_count();
  if (r.devices() <= 0 || r.devices() > available)
    c.fail("devices", "the job uses {} devices, but the topology has {} compute devices (must be 1..{})",
           r.devices(), available, available);
  if (r.topology_devices != 0 && r.topology_devices != available)
    c.fail("devices", "the result says the topology has {} devices, the topology {}", r.topology_devices,
           available);
}

void check_peak(const RunResult& r, const topology::Topology& topo, Checker& c) {
  const auto& p = r.plan;
  if (!(p.peak_flops > 0)) {
    c.fail("peak", "the per-device peak is {} FLOP/s (must be positive: MFU and HFU divide by it)",
           p.peak_flops);
    return;
  }
  std::string precision = r.setting("precision");
  if (precision.empty()) return;
  topology::Precision prec;
  try {
    prec = topology::parse_precision(precision);
  } catch (const std::invalid_argument&) {
    c.fail("peak", "the plan's precision '{}' is not a precision podsim knows", precision);
    return;
  }
  auto it = topo.device.peak_flops.find(prec);
  if (it == topo.device.peak_flops.end()) {
    c.fail("peak", "the plan runs in {}, for which the {} has no datasheet peak", precision,
           topo.device.name);
    return;
  }
  if (!close(p.peak_flops, it->second, 1e-9))
    c.fail("peak",
           "MFU and HFU are taken against a peak of {:.6g} FLOP/s, but the {} peak of the {} is {:.6g}",
           p.peak_flops, precision, topo.device.name, it->second);
}

void check_flops(const RunResult& r, Checker& c) {
  const auto& p = r.plan;
  double step = r.step_time();
  if (!(step > 0)) {
    c.fail("hfu", "an ok step takes {} s (must be positive)", step);
    return;
  }
  if (!at_most(p.model_flops, p.hardware_flops))
    c.fail("flops", "model FLOPs {:.6g} exceed the executed FLOPs {:.6g} (MFU {:.4f} > HFU {:.4f})",
           p.model_flops, p.hardware_flops, r.mfu(), r.hfu());
  // Causal attention counts half the score FLOPs: never more than the full count nor the executed one.
  if (p.model_flops_causal > 0 && !at_most(p.model_flops_causal, p.model_flops))
    c.fail("flops",
           "causal model FLOPs {:.6g} exceed the non-causal count {:.6g} (mfu_causal {:.4f} > mfu {:.4f})",
           p.model_flops_causal, p.model_flops, r.mfu_causal(), r.mfu());
  if (p.model_flops_causal > 0 && !at_most(p.model_flops_causal, p.hardware_flops))
    c.fail("flops", "causal model FLOPs {:.6g} exceed the executed FLOPs {:.6g}", p.model_flops_causal,
           p.hardware_flops);
  if (r.devices() <= 0 || !(p.peak_flops > 0)) return;
  double at_peak = p.hardware_flops / r.devices() / p.peak_flops;
  if (!at_most(at_peak, step))
    c.fail(
        "hfu",
        "the step takes {:.6g} s, but executing its {:.6g} FLOPs on {} devices at the peak of {:.6g} FLOP/s "
        "takes {:.6g} s (HFU {:.4f} > 1; MFU {:.4f})",
        step, p.hardware_flops, r.devices(), p.peak_flops, at_peak, at_peak / step, r.mfu());
  // Stronger than HFU <= 1: the kernels alone cannot run the FLOPs faster than peak either (a plan whose
  // compute tasks do less work than its FLOP count says shows a plausible HFU but impossible kernels).
  // Lanes are the devices' timelines (a pipeline stage, ...), so their mean compute time is per device.
  double compute = r.mean[workload::Category::compute];
  if (!r.stages.empty() && !at_most(at_peak, compute))
    c.fail("compute",
           "the devices compute for {:.6g} s per step on average, but its {:.6g} FLOPs per device take "
           "{:.6g} s at "
           "the peak of {:.6g} FLOP/s (the kernels would run at {:.4f} x peak)",
           compute, p.hardware_flops / r.devices(), at_peak, p.peak_flops, at_peak / compute);
  double hfu = p.hardware_flops / (step * r.devices() * p.peak_flops);
  double mfu = p.model_flops / (step * r.devices() * p.peak_flops);
  double tflops = p.hardware_flops / (step * r.devices()) / 1e12;
  if (!close(r.hfu(), hfu) || !close(r.mfu(), mfu) || !close(r.tflops_per_device(), tflops))
    c.fail("metrics",
           "reported HFU {:.6g}, MFU {:.6g}, TFLOP/s {:.6g} differ from FLOPs / (step x devices x peak): "
           "{:.6g}, "
           "{:.6g}, {:.6g}",
           r.hfu(), r.mfu(), r.tflops_per_device(), hfu, mfu, tflops);
}

void check_lane(const std::string& name, const StageBreakdown& b, double step, Checker& c) {
  bool finite = c.sound(name + " idle (s)", b.idle);
  for (int k = 0; k < workload::kCategories; ++k)
    finite &= c.sound(fmt::format("{} {} (s)", name, workload::to_string(static_cast<workload::Category>(k))),
                      b.seconds[k]);
  if (finite && !close(b.total(), step))
    c.fail("breakdown", "{}: categories + idle = {:.9g} s, but the step takes {:.9g} s", name, b.total(),
           step);
}

void check_breakdown(const RunResult& r, Checker& c) {
  double step = r.step_time();
  if (r.stages.empty()) c.fail("breakdown", "no lane accounts for the step's time");
  if (r.stages.size() != static_cast<size_t>(std::max(r.plan.graph.stages, 0)))
    c.fail("breakdown", "{} lanes accounted, the step graph has {}", r.stages.size(), r.plan.graph.stages);
  for (const auto& s : r.stages) check_lane(fmt::format("lane {}", s.stage), s, step, c);
  check_lane("mean over lanes", r.mean, step, c);
}

void check_tasks(const RunResult& r, Checker& c) {
  const auto& tasks = r.replay.tasks;
  if (tasks.size() != r.plan.graph.tasks.size()) {
    c.fail("tasks", "the replay timed {} tasks of a graph of {}", tasks.size(), r.plan.graph.tasks.size());
    return;
  }
  double step = r.step_time();
  for (size_t i = 0; i < tasks.size(); ++i) {
    const auto& t = tasks[i];
    bool ordered = std::isfinite(t.start) && std::isfinite(t.end) && t.start >= 0 &&
                   t.start <= t.compute_end && t.compute_end <= t.end && at_most(t.end, step);
    if (!ordered) {
      c.fail("tasks",
             "task {} starts at {:.9g}, computes until {:.9g} and ends at {:.9g} s of a {:.9g} s step", i,
             t.start, t.compute_end, t.end, step);
      return;  // one is enough to locate the bug
    }
  }
}

void check_memory(const RunResult& r, const topology::Topology& topo, Checker& c) {
  double capacity = r.device_memory_capacity > 0 ? r.device_memory_capacity : topo.device.hbm_bytes;
  if (capacity <= 0) return;
  for (size_t i = 0; i < r.plan.memory.size(); ++i) {
    double total = r.plan.memory[i].total();
    if (!at_most(total, capacity, 1e-9))
      c.fail("memory", "status ok, but lane {} needs {:.4f} GiB of the {:.4f} GiB a {} has", i,
             total / (1 << 30), capacity / (1 << 30), topo.device.name);
  }
}

// Parses a setting as a number; NaN when absent or not a number.
double number_setting(const RunResult& r, const std::string& key) {
  std::string v = r.setting(key);
  if (v.empty()) return std::nan("");
  char* end = nullptr;
  double d = std::strtod(v.c_str(), &end);
  return end && *end == '\0' ? d : std::nan("");
}

// Settings are printed numbers ("{:.6g}"): compare them to the plan's within their printed precision.
constexpr double kPrintedPrecision = 1e-5;

void check_batch(const RunResult& r, Checker& c) {
  double samples = r.plan.samples_per_step;
  if (!(samples > 0)) c.fail("batch", "a step trains {} samples (must be positive)", samples);
  for (const char* key : {"global_batch", "examples_per_batch"}) {
    double batch = number_setting(r, key);
    if (!std::isnan(batch) && !close(batch, samples, kPrintedPrecision))
      c.fail("batch", "the step trains {:.9g} samples, but its {} is {:.9g}", samples, key, batch);
  }
  double mb = number_setting(r, "micro_batch"), m = number_setting(r, "microbatches");
  double dp = number_setting(r, "dp");
  if (!std::isnan(mb) && !std::isnan(m) && !std::isnan(dp) && !close(mb * m * dp, samples, kPrintedPrecision))
    c.fail("batch", "micro_batch {} x microbatches {} x dp {} = {:.9g} sequences, but the step trains {:.9g}",
           mb, m, dp, mb * m * dp, samples);
}

std::string describe_settings(const RunResult& r) {
  std::string s;
  for (const auto& [k, v] : r.plan.settings) s += fmt::format("{}{}={}", s.empty() ? "" : " ", k, v);
  return s;
}

}  // namespace

std::vector<std::string> invariant_violations(const RunResult& r, const topology::Topology& topo) {
  std::vector<std::string> out;
  Checker c(out);
  if (!r.ok()) {
    if (r.status.empty()) c.fail("status", "the result has an empty status");
    if (r.status_detail.empty())
      c.fail("status", "status '{}' without a reason (status_detail is empty)", r.status);
    check_numbers(r, c);
    return out;
  }
  check_numbers(r, c);
  check_devices(r, topo, c);
  check_peak(r, topo, c);
  check_flops(r, c);
  check_breakdown(r, c);
  check_tasks(r, c);
  check_memory(r, topo, c);
  check_batch(r, c);
  return out;
}

void check_invariants(const RunResult& r, const topology::Topology& topo) {
  auto violations = invariant_violations(r, topo);
  if (violations.empty()) return;
  std::string message = "podsim produced a physically impossible result (a bug in podsim, please report it):";
  for (const auto& v : violations) message += "\n  invariant " + v;
  message += fmt::format("\n  result: {} ({}) on {}, status {}, {}", r.workload_name, r.workload_kind,
                         r.topology_name, r.status, describe_settings(r));
  throw InvariantViolation(message);
}

void check_choice(const std::vector<CandidateOutcome>& candidates, int chosen) {
  int fastest = -1;
  for (size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].feasible &&
        (fastest < 0 || candidates[i].per_sample() < candidates[static_cast<size_t>(fastest)].per_sample()))
      fastest = static_cast<int>(i);
  if (fastest < 0 && chosen < 0) return;
  if (chosen < 0 || chosen >= static_cast<int>(candidates.size()) || !candidates[chosen].feasible)
    throw InvariantViolation(fmt::format(
        "podsim chose no feasible setting although '{}' is feasible (a bug in podsim):\n  invariant choice",
        candidates[static_cast<size_t>(fastest)].label));
  const auto& a = candidates[static_cast<size_t>(chosen)];
  const auto& b = candidates[static_cast<size_t>(fastest)];
  if (b.per_sample() < a.per_sample())
    throw InvariantViolation(fmt::format(
        "podsim reported a slower setting than it found (a bug in podsim):\n  invariant choice: chose "
        "'{}' at {:.6g} s per sample, but '{}' takes {:.6g} s per sample",
        a.label, a.per_sample(), b.label, b.per_sample()));
}

}  // namespace podsim::report
