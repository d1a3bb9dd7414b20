// The study report's heatmap (a grid over two keys), table of points, and the page (sweep_report_html).
#include <fmt/format.h>

#include <algorithm>

#include "html_study_view.hpp"
#include "podsim/report/html_chart.hpp"

namespace podsim::report::html {
namespace {

std::string short_key(const std::string& k) {
  return k.substr(k.rfind('.') == std::string::npos ? 0 : k.rfind('.') + 1);
}

// What a cell without a simulated point shows: the status of its points, "—" when the study has none.
std::string mark_of(const StudyView& v, const std::vector<size_t>& rows) {
  if (rows.empty()) return "\u2014";
  std::string s = v.cell(rows[0], "status");
  return s == "out_of_memory" ? "OOM" : s;
}

}  // namespace

std::string heatmap_card(const StudyView& v, int& charts) {
  std::vector<std::string> keys;
  for (const auto& k : v.t.axis_keys)
    if (v.values_of(k).size() >= 2 && k != "case") keys.push_back(k);
  if (keys.size() < 2 || v.scales()) return "";  // over device counts the scaling charts say it
  const std::string &yk = keys[0], &xk = keys[1], thr = v.throughput_column();
  Heatmap h{short_key(xk),   short_key(yk),   thr == "tokens_per_s" ? "tokens/s" : "samples/s",
            v.values_of(xk), v.values_of(yk), {}};
  double best = 0;
  for (size_t r = 0; r < v.t.rows.size(); ++r)
    if (v.ok(r)) best = std::max(best, v.num(r, thr).value_or(0));
  for (const auto& y : h.ys) {
    std::vector<HeatCell> row;
    for (const auto& x : h.xs) {
      std::vector<size_t> rows;
      std::optional<size_t> top;
      for (size_t r = 0; r < v.t.rows.size(); ++r) {
        if (v.cell(r, xk) != x || v.cell(r, yk) != y) continue;
        rows.push_back(r);
        if (v.ok(r) && (!top || v.num(r, thr) > v.num(*top, thr))) top = r;
      }
      HeatCell c;
      c.mark = mark_of(v, rows);
      std::string where = fmt::format("{}={} {}={}", short_key(yk), y, short_key(xk), x);
      if (top) {
        c.value = v.num(*top, thr).value_or(0);
        c.best = *c.value == best;
        c.tooltip =
            fmt::format("{}: {} {} (best of {} point(s): {}), step {} s", where, number(*c.value), h.unit,
                        rows.size(), v.label(*top), number(v.num(*top, "step_time_s").value_or(0)));
      } else {
        c.tooltip = rows.empty() ? where + ": not in the study (filtered out)"
                                 : fmt::format("{}: {} \u2014 {}", where, c.mark, v.cell(rows[0], "detail"));
      }
      row.push_back(c);
    }
    h.cells.push_back(row);
  }
  std::string others;
  for (const auto& k : v.t.axis_keys)
    if (k != xk && k != yk && v.values_of(k).size() >= 2)
      others += (others.empty() ? "" : ", ") + short_key(k);
  charts++;
  return card(
      "heatmap-card", fmt::format("{} by {} and {}", h.unit, short_key(yk), short_key(xk)), heatmap_chart(h),
      (others.empty() ? std::string("") : "Each cell: the best over " + esc(others) + ". ") +
          "OOM: did not fit in device memory; \u2014: not in the study (a filter removed it); the star marks "
          "the best cell.",
      true);
}

std::string points_table(const StudyView& v, bool compare) {
  std::vector<std::string> wanted = {"point"};
  wanted.insert(wanted.end(), v.t.axis_keys.begin(), v.t.axis_keys.end());
  std::string thr = v.throughput_column();
  for (const char* c : {"status",
                        "devices",
                        "device",
                        "step_time_s",
                        "tokens_per_s",
                        "samples_per_s",
                        "tflops_per_device",
                        "mfu",
                        "memory_per_device_GiB",
                        "tp",
                        "pp",
                        "dp",
                        "ep",
                        "cp",
                        "micro_batch",
                        "virtual_stages",
                        "experts",
                        "systems",
                        "execution_mode",
                        "bubble_s",
                        "detail"})
    if (std::find(wanted.begin(), wanted.end(), c) == wanted.end()) wanted.push_back(c);
  std::vector<std::string> shown;
  for (const auto& c : wanted) {
    bool any = false;
    for (size_t r = 0; r < v.t.rows.size(); ++r) any = any || !v.cell(r, c).empty();
    if (any && v.col(c) >= 0) shown.push_back(c);
  }
  Table t;
  size_t base = v.baseline();
  double best = 0;
  for (size_t r = 0; r < v.t.rows.size(); ++r)
    if (v.ok(r)) best = std::max(best, v.num(r, thr).value_or(0));
  for (const auto& c : shown) {
    t.head.push_back(c);
    bool numeric = true;  // right-aligned when every value is a number
    for (size_t r = 0; r < v.t.rows.size(); ++r) numeric = numeric && (v.cell(r, c).empty() || v.num(r, c));
    t.numeric.push_back(numeric);
    if (compare && c == "step_time_s") t.head.push_back("step time vs baseline"), t.numeric.push_back(true);
    if (compare && c == thr) t.head.push_back("speedup"), t.numeric.push_back(true);
  }
  for (size_t r = 0; r < v.t.rows.size(); ++r) {
    std::vector<std::string> cells;
    for (const auto& c : shown) {
      cells.push_back(esc(short_value(c, v.cell(r, c))) +
                      (c == "point" && r == base && compare ? " (baseline)" : ""));
      auto mine = v.num(r, c), theirs = v.num(base, c);
      bool both = v.ok(r) && v.ok(base) && mine && theirs && *theirs > 0;
      if (compare && c == "step_time_s")
        cells.push_back(both ? fmt::format("{:+.1f}%", 100 * (*mine - *theirs) / *theirs) : "");
      if (compare && c == thr) cells.push_back(both ? fmt::format("{:.3f}x", *mine / *theirs) : "");
    }
    t.rows.push_back(cells);
    t.row_class.push_back(!v.ok(r) ? "bad" : v.num(r, thr).value_or(-1) == best ? "best" : "");
  }
  return table_html("points", t);
}

std::string study_page(const std::string& title, const std::string& subtitle, const ReportTable& table) {
  StudyView v(table);
  int charts = 0;
  std::string body = "<div class=\"grid\">\n";
  body += comparison_card(v, charts);
  body += heatmap_card(v, charts);
  body += scaling_cards(v, charts);
  body += breakdown_card(v, charts);
  body += memory_card(v, charts);
  body += "</div>\n<h2 style=\"margin-top:20px\">All points</h2>\n";
  bool compare = !v.scales() && table.rows.size() >= 2;
  if (compare)
    body += fmt::format(
        "<p class=\"note\">Compared against the baseline, {} (speedup: its throughput ratio; "
        "step time: relative change).</p>",
        esc(v.label(v.baseline())));
  body += points_table(v, compare);
  return page(title, subtitle, body, charts);
}

}  // namespace podsim::report::html

namespace podsim::report {
std::string sweep_report_html(const std::string& title, const std::string& subtitle,
                              const ReportTable& table) {
  return html::study_page(title, subtitle, table);
}
}  // namespace podsim::report
