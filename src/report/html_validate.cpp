// validate.html (html_validate.hpp).
#include "podsim/report/html_validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "podsim/report/html_svg.hpp"

namespace podsim::report {
namespace {

using namespace html;

constexpr double kX0 = 80, kX1 = 600, kY0 = 540, kY1 = 20;

const char* error_color(double e) {
  e = std::fabs(e);
  return e <= 5 ? "#3a9e5b" : e <= 20 ? "#e0a030" : "#c0392b";
}

// The band published * (1 - b) .. published * (1 + b) as a polygon over the axis range.
std::string band(const Axis& a, double b, const char* fill, const char* name) {
  auto pt = [&](double x, double f) {
    return fmt::format("{:.1f},{:.1f}", a.map(x, kX0, kX1), a.map(x * f, kY0, kY1));
  };
  return fmt::format(
      "<polygon class=\"band\" data-band=\"{}\" points=\"{} {} {} {}\" fill=\"{}\"><title>within "
      "{}</title></polygon>",
      b, pt(a.lo, 1 - b), pt(a.hi, 1 - b), pt(a.hi, 1 + b), pt(a.lo, 1 + b), fill, name);
}

std::string scatter(const ValidationReport& r) {
  double lo = 1e300, hi = 0;
  for (const auto& p : r.rows)
    if (p.status == "ok" && p.predicted > 0 && p.published > 0)
      lo = std::min({lo, p.published, p.predicted}), hi = std::max({hi, p.published, p.predicted});
  if (hi <= 0) return "";
  Axis a = hi / lo > 8 ? log10_axis(lo, hi) : linear_axis(lo * 0.85, hi * 1.1, false);
  std::string out = fmt::format(
      "<svg class=\"chart\" data-kind=\"scatter\" data-axis-lo=\"{:.6g}\" data-axis-hi=\"{:.6g}\" "
      "viewBox=\"0 0 620 590\" style=\"max-width:720px\" role=\"img\">",
      a.lo, a.hi);
  out += fmt::format(
      "<defs><clipPath id=\"plot\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/></clipPath></defs>",
      kX0, kY1, kX1 - kX0, kY0 - kY1);
  out += "<g clip-path=\"url(#plot)\">" + band(a, 0.2, "#fbeed9", "\u00b120%") +
         band(a, 0.05, "#dcefdc", "\u00b15%");
  out += fmt::format(
      "<line class=\"identity\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#5a6b7b\" "
      "stroke-dasharray=\"5 3\"><title>predicted = published</title></line></g>",
      kX0, kY0, kX1, kY1);
  out += fmt::format("<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>", kX0, kY1,
                     kX1 - kX0, kY0 - kY1);
  for (double t : a.ticks) {
    out += "<g class=\"x\">" + tick_text(a.map(t, kX0, kX1), kY0 + 16, t, "middle") + "</g>";
    out += "<g class=\"y\">" + tick_text(kX0 - 6, a.map(t, kY0, kY1) + 4, t, "end") + "</g>";
  }
  out +=
      fmt::format("<text class=\"axis-title\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">published {}{}</text>",
                  (kX0 + kX1) / 2, kY0 + 38, esc(r.metric), a.log ? " (log scale)" : "");
  out += fmt::format(
      "<text class=\"axis-title\" transform=\"translate(18 {}) rotate(-90)\" text-anchor=\"middle\">"
      "predicted {}</text>",
      (kY0 + kY1) / 2, esc(r.metric));
  for (const auto& p : r.rows) {
    if (p.status != "ok" || p.predicted <= 0 || p.published <= 0) continue;
    out += fmt::format(
        "<circle class=\"point\" data-published=\"{:.6g}\" data-predicted=\"{:.6g}\" cx=\"{:.1f}\" "
        "cy=\"{:.1f}\" r=\"5\" fill=\"{}\" fill-opacity=\"0.85\" stroke=\"white\"><title>{}: predicted {} "
        "{}, published {}, error {:+.1f}%</title></circle>",
        p.published, p.predicted, a.map(p.published, kX0, kX1), a.map(p.predicted, kY0, kY1),
        error_color(p.error_percent), esc(p.label), number(p.predicted), esc(r.metric), number(p.published),
        p.error_percent);
  }
  out += "</svg>";
  return out + legend({{"|error| \u2264 5%", "#3a9e5b"},
                       {"5% < |error| \u2264 20%", "#e0a030"},
                       {"|error| > 20%", "#c0392b"},
                       {"\u00b15% band", "#dcefdc"},
                       {"\u00b120% band", "#fbeed9"}});
}

std::string table(const ValidationReport& r) {
  std::vector<const ValidationPoint*> rows;
  for (const auto& p : r.rows) rows.push_back(&p);
  std::stable_sort(rows.begin(), rows.end(), [](const ValidationPoint* a, const ValidationPoint* b) {
    bool ao = a->status == "ok", bo = b->status == "ok";
    if (ao != bo) return ao;
    return ao && std::fabs(a->error_percent) > std::fabs(b->error_percent);
  });
  Table t{{"row", "published", "predicted", "error", "status", "detail"},
          {false, true, true, true, false, false},
          {},
          {}};
  for (const auto* p : rows) {
    bool ok = p->status == "ok";
    t.rows.push_back({esc(p->label), p->published > 0 ? number(p->published) : "",
                      ok ? number(p->predicted) : "", ok ? fmt::format("{:+.1f}%", p->error_percent) : "",
                      esc(p->status), esc(p->detail)});
    t.row_class.push_back(ok ? "" : "bad");
  }
  return table_html("validation", t);
}

}  // namespace

std::string validation_report_html(const ValidationReport& r) {
  double sum = 0, max = 0;
  int ok = 0;
  for (const auto& p : r.rows)
    if (p.status == "ok")
      sum += std::fabs(p.error_percent), max = std::max(max, std::fabs(p.error_percent)), ok++;
  std::string svg = scatter(r);
  std::string body = "<div class=\"grid\">\n";
  if (!svg.empty())
    body += card(
        "scatter-card", fmt::format("Predicted against published {}", r.metric), svg,
        fmt::format(
            "{} of {} rows predicted; mean |error| {:.1f}%, max |error| {:.1f}% over them. On the dashed "
            "line the prediction equals the published value.",
            ok, r.rows.size(), ok ? sum / ok : 0.0, max),
        true);
  body += "</div>\n<h2 style=\"margin-top:20px\">Rows, largest |error| first</h2>\n" + table(r);
  return page(r.title, r.subtitle, body, svg.empty() ? 0 : 1);
}

}  // namespace podsim::report
