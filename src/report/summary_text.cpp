#include "podsim/report/summary_text.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "podsim/workload/transformer_math.hpp"

namespace podsim::report {
namespace {

constexpr double GiB = 1073741824.0;

std::string seconds(double s) {
  if (s >= 1) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.1f} us", s * 1e6);
}

std::string schedule_text(const workload::WorkloadConfig& c) {
  if (c.parallel.pp == 1) return "no pipeline";
  if (c.parallel.schedule == workload::Schedule::interleaved && c.parallel.virtual_stages > 1)
    return fmt::format("interleaved 1F1B, {} virtual stages", c.parallel.virtual_stages);
  return c.parallel.schedule == workload::Schedule::gpipe ? "GPipe" : "1F1B";
}

}  // namespace

std::string human_summary(const RunResult& r) {
  const auto& c = r.step.config;
  std::string out;
  out += fmt::format("podsim: {} ({:.1f}B parameters) on {}, {} of {} x {}\n", r.workload_name,
                     workload::total_params(c.model) / 1e9, r.topology_name, r.devices, r.topology_devices,
                     r.device_name);
  out += fmt::format(
      "  parallelism  tp {} x pp {} x dp {}, {}, micro-batch {} ({} per step), recompute {}{}{}\n",
      c.parallel.tp, c.parallel.pp, c.parallel.dp, schedule_text(c), c.training.micro_batch,
      r.step.microbatches, workload::to_string(c.training.recompute),
      c.parallel.sequence_parallel ? ", sequence parallel" : "",
      c.parallel.zero ? fmt::format(", ZeRO-{}", c.parallel.zero) : "");
  double peak_mem = r.memory_per_device();
  if (r.status != "ok") {
    out += fmt::format("  status       {}: {}\n", r.status, r.status_detail);
    out += fmt::format("  memory       {:.1f} GiB per device needed, {:.0f} GiB available\n", peak_mem / GiB,
                       r.device_memory_capacity / GiB);
    return out;
  }
  out += fmt::format("  step time    {}   {} sequences, {:.4g} tokens/s\n", seconds(r.step_time()),
                     c.training.global_batch, r.tokens_per_s());
  out += fmt::format(
      "  throughput   {:.1f} TFLOP/s per device   MFU {:.1f}%   HFU {:.1f}%   (peak {:.0f} TFLOP/s {})\n",
      r.tflops_per_device(), 100 * r.mfu(), 100 * r.hfu(), r.step.peak_flops / 1e12,
      topology::to_string(c.training.precision));
  size_t worst = 0;
  for (size_t s = 0; s < r.step.memory.size(); ++s)
    if (r.step.memory[s].total() > r.step.memory[worst].total()) worst = s;
  const auto& m = r.step.memory[worst];
  out += fmt::format(
      "  memory       {:.1f} of {:.0f} GiB per device (stage {}: weights {:.1f}, gradients {:.1f}, optimizer "
      "{:.1f}, "
      "activations {:.1f}, other {:.1f})\n",
      peak_mem / GiB, r.device_memory_capacity / GiB, worst, m.weights / GiB, m.gradients / GiB,
      m.optimizer / GiB, m.activations / GiB, (m.buffers + m.framework) / GiB);
  const auto& b = r.mean;
  double total = std::max(b.total(), 1e-30);
  out += fmt::format("  where the time went (mean over {} pipeline stage{}):\n", r.stages.size(),
                     r.stages.size() == 1 ? "" : "s");
  auto line = [&](const char* what, double v) {
    out += fmt::format("    {:<34}{:>12} {:>6.1f}%\n", what, seconds(v), 100 * v / total);
  };
  line("compute", b.compute);
  line("exposed tensor-parallel comm", b.tp);
  line("exposed pipeline comm", b.pp);
  line("exposed data-parallel comm", b.dp);
  line("optimizer step", b.optimizer);
  line("pipeline bubble / idle", b.bubble);
  return out;
}

}  // namespace podsim::report
