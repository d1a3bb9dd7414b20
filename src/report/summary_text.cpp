#include "podsim/report/summary_text.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "podsim/core/units.hpp"

namespace podsim::report {
namespace {

std::string seconds(double s) {
  if (s >= 1) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.1f} us", s * 1e6);
}

}  // namespace

std::string human_summary(const RunResult& r) {
  const auto& p = r.plan;
  std::string out;
  std::string params = r.setting("model_params_billion");
  out += fmt::format("podsim: {}{} on {}, {} of {} x {}\n", r.workload_name,
                     params.empty() ? "" : fmt::format(" ({}B parameters)", params), r.topology_name,
                     r.devices(), r.topology_devices, r.device_name);
  if (!r.server_usage.empty())
    out += fmt::format(
        "  servers      the job runs on {} (node.devices_used); the others are idle and not "
        "counted above\n",
        r.server_usage);
  if (!p.description.empty()) out += fmt::format("  setup        {}\n", p.description);
  for (const auto& w : p.warnings) out += fmt::format("  warning      {}\n", w);
  for (const auto& h : p.hints) out += fmt::format("  hint         {}\n", h);
  if (r.devices() > 0 && r.devices() < r.topology_devices)  // e.g. dp: auto chose a divisor of the batch
    out += fmt::format("  idle         {} of the {} devices run nothing (the parallel layout uses {})\n",
                       r.topology_devices - r.devices(), r.topology_devices, r.devices());
  double peak_mem = r.memory_per_device();
  if (!r.ok()) {
    out += fmt::format("  status       {}: {}\n", r.status, r.status_detail);
    // Name what did not fit when it is not device memory: a parameter server short of host DRAM has
    // devices well within their memory, and the memory line alone would look like a fit.
    auto shortfall = r.out_of_memory();
    bool elsewhere = shortfall && peak_mem <= r.device_memory_capacity;
    if (elsewhere)
      out += fmt::format("  did not fit  {}: {:.1f} GiB needed, {:.1f} GiB available\n", shortfall->tier,
                         shortfall->needed_bytes / GiB, shortfall->available_bytes / GiB);
    out +=
        fmt::format("  memory       {:.1f} GiB per device needed, {:.1f} GiB available{}\n", peak_mem / GiB,
                    r.device_memory_capacity / GiB, elsewhere ? " (device memory fits)" : "");
    return out;
  }
  out += fmt::format("  step time    {}   {:.4g} steps/s, {:.4g} samples/s{}\n", seconds(r.step_time()),
                     1 / r.step_time(), r.samples_per_s(),
                     p.tokens_per_step > 0 ? fmt::format(", {:.4g} tokens/s", r.tokens_per_s()) : "");
  if (const auto& st = r.stragglers; st && st->slow_devices > 0) {
    std::string slow;
    for (size_t s = 0; s < st->gating_stage_speed.size(); ++s)
      if (st->gating_stage_speed[s] < 1)
        slow += fmt::format("{}stage {} at {:.3g}x", slow.empty() ? "" : ", ", s, st->gating_stage_speed[s]);
    out += fmt::format(
        "  stragglers   {} slow devices in {} of {} replicas: {:+.1f}% against {} balanced, gated by "
        "replica {} ({}){}\n",
        st->slow_devices, st->slow_replicas, st->replicas, 100 * st->loss(), seconds(st->balanced_step),
        st->gating_replica, slow, st->patterns_skipped > 0 ? "; a lower bound (see notes)" : "");
  } else if (st) {
    out += "  stragglers   the slow devices are outside this job\n";
  }
  if (r.links) out += links_summary_line(*r.links);
  if (p.peak_flops > 0)
    out += fmt::format(
        "  throughput   {:.1f} TFLOP/s per device   MFU {:.1f}%   HFU {:.1f}%   (peak {:.0f} TFLOP/s {})\n",
        r.tflops_per_device(), 100 * r.mfu(), 100 * r.hfu(), p.peak_flops / 1e12, r.setting("precision"));
  // Which model-FLOP count MFU uses, and the causal one where the workload has attention to count.
  if (p.peak_flops > 0 && p.model_flops_causal > 0 && p.model_flops_causal != p.model_flops)
    out += fmt::format(
        "  model FLOPs  MFU counts attention over the full s x s scores (Megatron SC21 Eq. 3); causal "
        "(NVIDIA NeMo's count): MFU {:.1f}%\n",
        100 * r.mfu_causal());
  if (!p.memory.empty()) {
    size_t worst = 0;
    for (size_t s = 0; s < p.memory.size(); ++s)
      if (p.memory[s].total() > p.memory[worst].total()) worst = s;
    const auto& m = p.memory[worst];
    std::string lane =
        worst < p.graph.lane_names.size() ? p.graph.lane_names[worst] : fmt::format("stage {}", worst);
    out += fmt::format(
        "  memory       {:.1f} of {:.0f} GiB per device ({}: weights {:.1f}, gradients {:.1f}, optimizer "
        "{:.1f}, "
        "activations {:.1f}, other {:.1f})\n",
        peak_mem / GiB, r.device_memory_capacity / GiB, lane, m.weights / GiB, m.gradients / GiB,
        m.optimizer / GiB, m.activations / GiB, (m.buffers + m.framework) / GiB);
  }
  if (!p.metrics.empty()) {
    size_t width = 0;
    for (const auto& [k, v] : p.metrics) width = std::max(width, k.size());
    out += "  figures\n";
    for (const auto& [k, v] : p.metrics) out += fmt::format("    {:<{}}  {:.4g}\n", k, width, v);
  }
  const auto& b = r.mean;
  double total = std::max(b.total(), 1e-30);
  out += fmt::format("  where the time went (mean over {} {}{}):\n", r.stages.size(), p.graph.lane_kind,
                     r.stages.size() == 1 ? "" : "s");
  auto line = [&](const char* what, double v) {
    out += fmt::format("    {:<34}{:>12} {:>6.1f}%\n", what, seconds(v), 100 * v / total);
  };
  for (auto c : workload::kChargeOrder) {
    // Megatron's four always show (a zero is informative there); other kinds show what they used.
    bool pipeline = p.graph.lane_kind == "pipeline stage";
    bool always = c == workload::Category::compute ||
                  (pipeline && (c == workload::Category::tp || c == workload::Category::pp ||
                                c == workload::Category::dp || c == workload::Category::optimizer));
    // Context-parallel comm shows whenever the step has some, even fully hidden (a zero is informative).
    bool has_cp = c == workload::Category::cp &&
                  std::any_of(p.graph.tasks.begin(), p.graph.tasks.end(), [](const auto& t) {
                    return t.plan >= 0 && t.comm_category == workload::Category::cp;
                  });
    if (always || has_cp || b[c] > 0) line(workload::description(c), b[c]);
  }
  line(p.graph.lane_kind == "pipeline stage" ? "pipeline bubble / idle" : "idle", b.idle);
  return out;
}

}  // namespace podsim::report
