// The study report (html.hpp sweep_report_html): what-if comparison against the baseline, scaling curves
// where the device count varies, a heatmap for a two-key grid, breakdown and memory per point, the table.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "html_study_view.hpp"
#include "podsim/report/html_chart.hpp"

namespace podsim::report::html {
namespace {

std::string unit_of(const std::string& throughput) {
  return throughput == "tokens_per_s" ? "tokens/s" : "samples/s";
}

}  // namespace

std::string scaling_cards(const StudyView& v, int& charts) {
  if (!v.scales()) return "";
  std::vector<Series> tflops, efficiency;
  std::string thr = v.throughput_column();
  for (const auto& [name, rows] : v.series()) {
    Series s{name, {}, {}, {}}, e{name, {}, {}, {}};
    double base_dev = v.num(rows[0], "devices").value_or(1),
           base = v.num(rows[0], thr).value_or(0) / base_dev;
    for (size_t r : rows) {
      double d = v.num(r, "devices").value_or(0), tf = v.num(r, "tflops_per_device").value_or(0);
      double eff = base > 0 ? 100 * v.num(r, thr).value_or(0) / d / base : 0;
      s.x.push_back(d), s.y.push_back(tf);
      s.tooltips.push_back(fmt::format("{}: {} devices, {} TFLOP/s per device, step {} s", name, number(d),
                                       number(tf), number(v.num(r, "step_time_s").value_or(0))));
      e.x.push_back(d), e.y.push_back(eff);
      e.tooltips.push_back(fmt::format("{}: {} devices, {:.1f}% of the {}-device point's {} per device", name,
                                       number(d), eff, number(base_dev), unit_of(thr)));
    }
    tflops.push_back(s);
    if (rows.size() >= 2) efficiency.push_back(e);
  }
  charts += 2;
  std::string out = card("scaling-card", "TFLOP/s per device against devices",
                         line_chart(tflops, {"devices", "TFLOP/s per device", true, true}),
                         "One line per machine, model and non-sizing setting; axes that size the job (nodes, "
                         "batch) move along it.");
  out += card("efficiency-card", "Scaling efficiency against devices",
              line_chart(efficiency, {"devices", "scaling efficiency (%)", true, true}),
              fmt::format("{} per device relative to the smallest point of the same line (100% = linear "
                          "scaling).",
                          unit_of(thr)));
  return out;
}

std::string comparison_card(const StudyView& v, int& charts) {
  if (v.scales() || v.t.rows.size() < 2) return "";
  std::string thr = v.throughput_column();
  size_t base = v.baseline();
  double base_thr = v.num(base, thr).value_or(0), best = 0;
  for (size_t r = 0; r < v.t.rows.size(); ++r)
    if (v.ok(r)) best = std::max(best, v.num(r, thr).value_or(0));
  std::vector<Bar> bars;
  for (size_t r = 0; r < v.t.rows.size(); ++r) {
    Bar b{v.label(r) + (r == base ? " (baseline)" : ""), v.num(r, thr).value_or(0), "", false, !v.ok(r), ""};
    b.best = v.ok(r) && b.value == best;
    b.failed_text = v.cell(r, "status");
    b.tooltip = fmt::format(
        "{}: {} {}, step {} s on {} devices{}", v.label(r), number(b.value), unit_of(thr),
        number(v.num(r, "step_time_s").value_or(0)), v.cell(r, "devices"),
        base_thr > 0 && r != base ? fmt::format(", {:.3f}x the baseline", b.value / base_thr) : "");
    bars.push_back(b);
  }
  charts++;
  return card(
      "comparison-card", fmt::format("Throughput per case ({}), against the baseline", unit_of(thr)),
      hbar_chart(bars, unit_of(thr)),
      fmt::format("Baseline: {}. The best point is green with a star; the table below has the speedup "
                  "and step-time change of every point.",
                  esc(v.label(base))),
      true);
}

std::string breakdown_card(const StudyView& v, int& charts) {
  static const std::vector<std::pair<std::string, Part>> cats = {
      {"compute_s", {"compute", "#2f6db5"}},
      {"tp_exposed_s", {"tensor-parallel comm", "#e07b39"}},
      {"cp_exposed_s", {"context-parallel comm", "#c0392b"}},
      {"ep_exposed_s", {"expert all-to-all", "#d35fa5"}},
      {"optimizer_s", {"optimizer", "#8c6d46"}},
      {"pp_exposed_s", {"pipeline comm", "#3a9e5b"}},
      {"stream_exposed_s", {"parameter streaming", "#2ab0c4"}},
      {"storage_exposed_s", {"host/SSD tiers", "#b8a828"}},
      {"dp_exposed_s", {"data-parallel comm", "#8e6bbf"}},
      {"bubble_s", {"bubble / idle", "#c9d1da"}}};
  std::vector<Part> categories;
  for (const auto& c : cats) categories.push_back(c.second);
  std::vector<Stack> stacks;
  for (size_t r = 0; r < v.t.rows.size() && stacks.size() < 200; ++r) {
    if (!v.ok(r)) continue;
    Stack s{v.label(r), {}, std::nullopt, ""};
    for (const auto& c : cats) s.values.push_back(v.num(r, c.first).value_or(0));
    stacks.push_back(s);
  }
  if (stacks.empty()) return "";
  charts++;
  return card(
      "breakdown-card", "Step time per point, by where it goes", stacked_chart(categories, stacks, "s"),
      "Seconds per step, mean over pipeline stages; overlapping work is charged once, communication only "
      "where it is exposed.",
      true);
}

namespace {

// results.csv's memory components (study::memory_columns), in the order the stacked bars draw them.
const std::vector<std::pair<std::string, Part>>& memory_parts() {
  static const std::vector<std::pair<std::string, Part>> parts = {
      {"memory_weights_GiB", {"weights", "#2f6db5"}},
      {"memory_gradients_GiB", {"gradients", "#6a9fd8"}},
      {"memory_optimizer_GiB", {"optimizer", "#e08a2f"}},
      {"memory_activations_GiB", {"activations", "#4c9a52"}},
      {"memory_buffers_GiB", {"buffers", "#9467bd"}},
      {"memory_framework_GiB", {"framework", "#8c8c8c"}}};
  return parts;
}

// A point's bar: its components where the table has them (a study run before they existed has only the
// total, drawn as one segment, red where it did not fit).
std::vector<double> memory_values(const StudyView& v, size_t r, double total, bool components) {
  std::vector<double> values;
  if (!components) return {v.ok(r) ? total : 0, v.ok(r) ? 0 : total};
  for (const auto& [column, part] : memory_parts()) values.push_back(v.num(r, column).value_or(0));
  return values;
}

}  // namespace

std::string memory_card(const StudyView& v, int& charts) {
  std::vector<Stack> stacks;
  std::string failures;
  const bool components = v.col(memory_parts()[0].first) >= 0;
  for (size_t r = 0; r < v.t.rows.size() && stacks.size() < 200; ++r) {
    auto mem = v.num(r, "memory_per_device_GiB");
    std::string status = v.cell(r, "status");
    if (!v.ok(r))
      failures += fmt::format("<li><b>{}</b>: {}{}</li>", esc(v.label(r)), esc(status),
                              v.cell(r, "detail").empty() ? "" : " \u2014 " + esc(v.cell(r, "detail")));
    if (!mem) continue;
    Stack s{v.label(r), memory_values(v, r, *mem, components), v.num(r, "memory_capacity_GiB"), ""};
    if (status == "out_of_memory")
      s.failed_text =
          v.num(r, "memory_needed_GiB")
              ? fmt::format("out of memory: needs {} GiB of {} GiB", number(*v.num(r, "memory_needed_GiB")),
                            number(v.num(r, "memory_available_GiB").value_or(0)))
              : "out of memory";
    stacks.push_back(s);
  }
  std::vector<Part> parts = {{"memory per device", "#2f6db5"}, {"did not fit", "#e0a0a0"}};
  if (components) {
    parts.clear();
    for (const auto& [column, part] : memory_parts()) parts.push_back(part);
  }
  std::string body = stacks.empty() ? "" : stacked_chart(parts, stacks, "GiB", "device memory capacity");
  if (!stacks.empty()) charts++;
  if (!failures.empty())
    body += "<h3>Points that did not run</h3><ul class=\"failures\">" + failures + "</ul>";
  if (body.empty()) return "";
  return card("memory-card", "Memory per device against capacity", body,
              "Peak over pipeline stages, by component (the stage with the most memory). The red tick is the "
              "device's memory.",
              true);
}

}  // namespace podsim::report::html
