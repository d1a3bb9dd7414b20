// Bar, stacked-bar and line charts (html_chart.hpp); the heatmap is in html_heatmap.cpp.
#include "podsim/report/html_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace podsim::report::html {
namespace {

constexpr double kCharPx = 7.0;  // width of a character of the 12px label font, rounded up
constexpr double kRow = 24, kTop = 10, kAxisH = 34;

double label_width(const std::vector<std::string>& labels) {
  size_t n = 4;
  for (const auto& l : labels) n = std::max(n, l.size());
  return n * kCharPx + 14;
}

// Vertical grid lines and tick labels of a horizontal value axis under a plot of height `h`.
std::string x_axis(const Axis& a, double x0, double x1, double top, double h, const std::string& title) {
  std::string out = "<g class=\"grid\">";
  for (double t : a.ticks) {
    double x = a.map(t, x0, x1);
    out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/>", x, top, x, top + h);
  }
  out += "</g>";
  for (double t : a.ticks) out += tick_text(a.map(t, x0, x1), top + h + 14, t, "middle");
  out += fmt::format("<text class=\"axis-title\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>",
                     (x0 + x1) / 2, top + h + 30, esc(title));
  return out;
}

std::string svg_open(const char* kind, double w, double h, const Axis* axis) {
  std::string range =
      axis ? fmt::format(" data-axis-lo=\"{:.6g}\" data-axis-hi=\"{:.6g}\"", axis->lo, axis->hi) : "";
  return fmt::format("<svg class=\"chart\" data-kind=\"{}\" viewBox=\"0 0 {:.0f} {:.0f}\"{} role=\"img\">",
                     kind, w, h, range);
}

std::string row_label(double x, double y, const std::string& label) {
  return fmt::format("<text class=\"label\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>", x, y,
                     esc(label));
}

}  // namespace

std::string hbar_chart(const std::vector<Bar>& bars, const std::string& value_label) {
  std::vector<std::string> labels;
  double hi = 0;
  for (const auto& b : bars) labels.push_back(b.label), hi = std::max(hi, b.failed ? 0 : b.value);
  double lw = label_width(labels), pw = 520, h = kTop + kRow * bars.size();
  Axis a = linear_axis(0, hi);
  double x0 = lw, x1 = lw + pw;
  std::string out = svg_open("hbar", x1 + 110, h + kAxisH + 4, &a);
  out += x_axis(a, x0, x1, kTop, h - kTop, value_label);
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    double y = kTop + kRow * i;
    out += row_label(x0 - 6, y + 16, b.label);
    if (b.failed) {
      out += fmt::format("<text class=\"failed\" x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#9a3b3b\">{}</text>",
                         x0 + 4, y + 16, esc(b.failed_text));
      continue;
    }
    double x = a.map(b.value, x0, x1);
    out += fmt::format(
        "<rect class=\"bar{}\" data-label=\"{}\" data-value=\"{:.6g}\" x=\"{:.1f}\" y=\"{:.1f}\" "
        "width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"><title>{}</title></rect>",
        b.best ? " best" : "", esc(b.label), b.value, x0, y + 4, std::max(0.0, x - x0), kRow - 8,
        b.best ? "#3a9e5b" : "#2f6db5", esc(b.tooltip));
    out += fmt::format("<text class=\"value\" x=\"{:.1f}\" y=\"{:.1f}\">{}{}</text>", x + 4, y + 16,
                       number(b.value), b.best ? " \u2605 best" : "");
  }
  out += fmt::format("<line class=\"frame\" x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\"/>",
                     x0, kTop, h);
  return out + "</svg>";
}

std::string stacked_chart(const std::vector<Part>& categories, const std::vector<Stack>& stacks,
                          const std::string& unit, const std::string& limit_name) {
  std::vector<std::string> labels;
  double hi = 0;
  for (const auto& s : stacks) {
    double sum = 0;
    for (double v : s.values) sum += std::max(0.0, v);
    hi = std::max({hi, sum, s.limit.value_or(0)});
    labels.push_back(s.label);
  }
  double lw = label_width(labels), pw = 560, h = kTop + kRow * stacks.size();
  Axis a = linear_axis(0, hi);
  double x0 = lw, x1 = lw + pw;
  std::string out = svg_open("stacked", x1 + 150, h + kAxisH + 4, &a);
  out += x_axis(a, x0, x1, kTop, h - kTop, unit);
  for (size_t i = 0; i < stacks.size(); ++i) {
    const Stack& s = stacks[i];
    double y = kTop + kRow * i, x = x0, total = 0;
    out += row_label(x0 - 6, y + 16, s.label);
    out += fmt::format("<g class=\"stack\" data-label=\"{}\">", esc(s.label));
    for (double v : s.values) total += std::max(0.0, v);
    for (size_t c = 0; c < categories.size() && c < s.values.size(); ++c) {
      if (!(s.values[c] > 0)) continue;
      double w = a.map(s.values[c], x0, x1) - x0;
      out += fmt::format(
          "<rect class=\"segment\" data-category=\"{}\" data-value=\"{:.6g}\" x=\"{:.2f}\" y=\"{:.1f}\" "
          "width=\"{:.2f}\" height=\"{:.1f}\" fill=\"{}\"><title>{}: {}: {} {} of {} {} "
          "({:.1f}%)</title></rect>",
          esc(categories[c].name), s.values[c], x, y + 4, w, kRow - 8, categories[c].color, esc(s.label),
          esc(categories[c].name), number(s.values[c]), esc(unit), number(total), esc(unit),
          total > 0 ? 100 * s.values[c] / total : 0);
      x += w;
    }
    out += "</g>";
    if (s.limit) {
      double lx = a.map(*s.limit, x0, x1);
      out += fmt::format(
          "<line class=\"limit\" data-value=\"{:.6g}\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" "
          "y2=\"{:.1f}\" stroke=\"#c0392b\" stroke-width=\"2.5\"><title>{}: {} {}</title></line>",
          *s.limit, lx, y + 1, lx, y + kRow - 1, esc(limit_name), number(*s.limit), esc(unit));
    }
    std::string after = s.failed_text.empty() ? number(total) : s.failed_text;
    out += fmt::format("<text class=\"value\" x=\"{:.1f}\" y=\"{:.1f}\"{}>{}</text>",
                       std::max(x, s.limit ? a.map(*s.limit, x0, x1) : x) + 5, y + 16,
                       s.failed_text.empty() ? "" : " fill=\"#9a3b3b\"", esc(after));
  }
  out += "</svg>";
  std::vector<LegendItem> items;
  for (size_t c = 0; c < categories.size(); ++c) {
    bool used = false;
    for (const auto& s : stacks) used = used || (c < s.values.size() && s.values[c] > 0);
    if (used) items.push_back({categories[c].name, categories[c].color});
  }
  if (!limit_name.empty()) items.push_back({limit_name, "#c0392b"});
  return out + legend(items);
}

namespace {
std::string series_marks(const Series& s, int k, const Axis& ax, const Axis& ay, double x0, double x1,
                         double y0, double y1, double offset) {
  std::string path, marks;
  for (size_t i = 0; i < s.x.size(); ++i) {
    double x = ax.map(s.x[i], x0, x1) + offset, y = ay.map(s.y[i], y0, y1);
    path += fmt::format("{}{:.1f},{:.1f}", i ? "L" : "M", x, y);
    marks += fmt::format(
        "<path class=\"point\" data-x=\"{:.6g}\" data-y=\"{:.6g}\" d=\"{}\" "
        "fill=\"{}\"><title>{}</title></path>",
        s.x[i], s.y[i], marker_path(k, x, y, 4.5), color_of(k),
        esc(i < s.tooltips.size() ? s.tooltips[i] : s.name));
  }
  return fmt::format(
      "<g class=\"series\" data-name=\"{}\" data-points=\"{}\"><path d=\"{}\" fill=\"none\" stroke=\"{}\" "
      "stroke-width=\"2\" stroke-dasharray=\"{}\"/>{}</g>",
      esc(s.name), s.x.size(), path, color_of(k), dash_of(k), marks);
}
}  // namespace

std::string line_chart(const std::vector<Series>& series, const LineOptions& o) {
  std::vector<double> xs;
  double ylo = 1e300, yhi = -1e300;
  for (const auto& s : series) {
    xs.insert(xs.end(), s.x.begin(), s.x.end());
    for (double y : s.y) ylo = std::min(ylo, y), yhi = std::max(yhi, y);
  }
  if (xs.empty()) return "";
  Axis ax = o.log_x ? log2_axis(xs)
                    : linear_axis(*std::min_element(xs.begin(), xs.end()),
                                  *std::max_element(xs.begin(), xs.end()), false);
  Axis ay = linear_axis(ylo, yhi, o.y_from_zero);
  const double x0 = 70, x1 = 690, y0 = 330, y1 = 14;
  std::string out = svg_open("line", 710, 372, &ay);
  out += fmt::format("<g class=\"grid\">");
  for (double t : ay.ticks)
    out += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>", x0, x1, ay.map(t, y0, y1),
                       ay.map(t, y0, y1));
  for (double t : ax.ticks)
    out += fmt::format("<line y1=\"{}\" y2=\"{}\" x1=\"{:.1f}\" x2=\"{:.1f}\"/>", y1, y0, ax.map(t, x0, x1),
                       ax.map(t, x0, x1));
  out += "</g>";
  out += fmt::format("<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>", x0, y1, x1 - x0,
                     y0 - y1);
  for (double t : ay.ticks)
    out += "<g class=\"y\">" + tick_text(x0 - 6, ay.map(t, y0, y1) + 4, t, "end") + "</g>";
  for (double t : ax.ticks)
    out += "<g class=\"x\">" + tick_text(ax.map(t, x0, x1), y0 + 16, t, "middle") + "</g>";
  out += fmt::format("<text class=\"axis-title\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}{}</text>",
                     (x0 + x1) / 2, y0 + 36, esc(o.x_label), o.log_x ? " (log scale)" : "");
  out += fmt::format(
      "<text class=\"axis-title\" transform=\"translate(16 {}) rotate(-90)\" "
      "text-anchor=\"middle\">{}</text>",
      (y0 + y1) / 2, esc(o.y_label));
  int n = static_cast<int>(series.size());
  double spread = std::min(4.0, 24.0 / std::max(1, n));  // px between series, so equal points stay apart
  std::vector<LegendItem> items;
  for (int k = 0; k < n; ++k) {
    out += series_marks(series[k], k, ax, ay, x0, x1, y0, y1, (k - (n - 1) / 2.0) * spread);
    items.push_back({series[k].name, color_of(k), k, dash_of(k)});
  }
  return out + "</svg>" + legend(items);
}

}  // namespace podsim::report::html
