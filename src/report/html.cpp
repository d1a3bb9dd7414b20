// The single-run report (html.hpp run_report_html): the step's timeline, where each stage's time goes,
// memory per stage against capacity, why a run did not fit, and every summary value. The study report
// is in html_study*.cpp, the charts in html_chart.cpp / html_gantt.cpp.
#include "podsim/report/html.hpp"

#include <fmt/format.h>

#include "podsim/core/units.hpp"
#include "podsim/report/html_chart.hpp"
#include "podsim/report/html_gantt.hpp"
#include "podsim/report/links_html.hpp"
#include "podsim/report/writers.hpp"

namespace podsim::report {
namespace {

using namespace html;

std::string lane_name(const RunResult& r, int lane) {
  const auto& names = r.plan.graph.lane_names;
  return static_cast<size_t>(lane) < names.size() ? names[lane] : fmt::format("stage {}", lane);
}

std::string timeline_card(const RunResult& r, int& charts) {
  std::string svg = gantt_chart(r);
  if (svg.empty()) return "";
  charts++;
  return card(
      "timeline-card", "Timeline of one step, per pipeline stage", svg,
      "Top row of each stage: the device (kernels, and the collectives it waits for); thinner rows: "
      "communication streams (gradient reduction, pipeline sends and receives). Grey is idle time, the "
      "pipeline bubble. Hover for what a slice is and how long it took.",
      true);
}

std::string stage_time_card(const RunResult& r, int& charts) {
  if (!r.ok() || r.stages.empty()) return "";
  std::vector<Part> cats;
  for (auto c : plan::kChargeOrder) cats.push_back({plan::description(c), category_color(c)});
  cats.push_back({"bubble / idle", kIdleColor});
  std::vector<Stack> stacks;
  for (const auto& s : r.stages) {
    Stack st{lane_name(r, s.stage), {}, std::nullopt, ""};
    for (auto c : plan::kChargeOrder) st.values.push_back(s[c]);
    st.values.push_back(s.idle);
    stacks.push_back(st);
  }
  charts++;
  return card(
      "stages-card", "Step time per pipeline stage, by where it goes", stacked_chart(cats, stacks, "s"),
      "Seconds per step; overlapping work is charged once, to the first of compute, tensor-, context-, "
      "expert-parallel, optimizer, pipeline, streaming, storage, data-parallel.",
      true);
}

std::string memory_card(const RunResult& r, int& charts) {
  if (r.plan.memory.empty()) return "";
  using M = workload::MemoryBreakdown;
  const std::vector<std::pair<Part, double M::*>> parts = {
      {{"weights", "#2f6db5"}, &M::weights},     {{"gradients", "#e07b39"}, &M::gradients},
      {{"optimizer", "#3a9e5b"}, &M::optimizer}, {{"activations", "#8e6bbf"}, &M::activations},
      {{"buffers", "#b8a828"}, &M::buffers},     {{"framework", "#6d7b8a"}, &M::framework}};
  std::vector<Part> cats;
  for (const auto& p : parts) cats.push_back(p.first);
  std::vector<Stack> stacks;
  for (size_t l = 0; l < r.plan.memory.size(); ++l) {
    Stack st{lane_name(r, static_cast<int>(l)), {}, std::nullopt, ""};
    for (const auto& p : parts) st.values.push_back(r.plan.memory[l].*p.second / GiB);
    if (r.device_memory_capacity > 0) st.limit = r.device_memory_capacity / GiB;
    stacks.push_back(st);
  }
  charts++;
  return card("memory-card", "Memory per device, per pipeline stage",
              stacked_chart(cats, stacks, "GiB", "device memory capacity"),
              "Peak per device of each stage; the red tick is the device's memory.", true);
}

std::string status_card(const RunResult& r) {
  if (r.ok()) return "";
  std::string text = esc(r.status) + (r.status_detail.empty() ? "" : ": " + esc(r.status_detail));
  if (auto oom = r.out_of_memory())
    text +=
        fmt::format("<br>Needs {} GiB of {} GiB{}.", number(oom->needed_bytes / GiB),
                    number(oom->available_bytes / GiB), oom->tier.empty() ? "" : " (" + esc(oom->tier) + ")");
  return card("status-card", "Why this run was not simulated", "<p class=\"reason\">" + text + "</p>", "",
              true);
}

std::string summary_table(const RunResult& r) {
  Table t{{"quantity", "value"}, {false, false}, {}, {}};
  for (const auto& [k, v] : summary_row(r))
    if (!v.empty()) t.rows.push_back({esc(k), esc(v)});
  return table_html("summary", t);
}

}  // namespace

std::string run_report_html(const RunResult& r) {
  int charts = 0;
  std::string body = "<div class=\"grid\">\n";
  body += status_card(r);
  body += timeline_card(r, charts);
  body += stage_time_card(r, charts);
  body += memory_card(r, charts);
  // Further per-run sections go here, one line each (a function returning its own <section> cards).
  body += links_html_section(r);
  body += "</div>\n<h2 style=\"margin-top:20px\">Summary</h2>\n" + summary_table(r);
  std::string title = fmt::format("{} on {}", r.workload_name, r.topology_name);
  std::string subtitle =
      r.ok() ? fmt::format("{} — step {:.4g} s, {:.1f} TFLOP/s per device, MFU {:.1f}%", r.plan.description,
                           r.step_time(), r.tflops_per_device(), 100 * r.mfu())
             : fmt::format("{}: {}", r.status, r.status_detail);
  return page(title, subtitle, body, charts);
}

}  // namespace podsim::report
