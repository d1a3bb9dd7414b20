// Building blocks of the HTML reports (html_svg.hpp).
#include "podsim/report/html_svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace podsim::report::html {

std::string esc(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string number(double v) {
  double a = std::fabs(v);
  if (a >= 1e10) return fmt::format("{:.4g}G", v / 1e9);
  if (a >= 1e7) return fmt::format("{:.4g}M", v / 1e6);
  if (a >= 1e4) return fmt::format("{:.4g}k", v / 1e3);
  return fmt::format("{:.4g}", v);
}

double Axis::map(double v, double px0, double px1) const {
  double a = lo, b = hi;
  if (log) a = std::log(lo), b = std::log(hi), v = std::log(std::max(v, 1e-300));
  return b > a ? px0 + (v - a) / (b - a) * (px1 - px0) : (px0 + px1) / 2;
}

namespace {
double nice_step(double range, int target) {
  double raw = range / target, p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}
}  // namespace

Axis linear_axis(double lo, double hi, bool from_zero) {
  if (from_zero) lo = std::min(lo, 0.0), hi = std::max(hi, 0.0);
  if (!(hi > lo)) hi = lo + (lo == 0 ? 1 : std::fabs(lo) * 0.1);
  double step = nice_step(hi - lo, 5);
  Axis a;
  a.lo = std::floor(lo / step + 1e-9) * step;
  a.hi = std::ceil(hi / step - 1e-9) * step;
  for (double t = a.lo; t <= a.hi + step * 1e-6; t += step)
    a.ticks.push_back(std::fabs(t) < step * 1e-9 ? 0 : t);
  return a;
}

Axis log2_axis(const std::vector<double>& values) {
  std::set<double> distinct;
  for (double v : values)
    if (v > 0) distinct.insert(v);
  Axis a;
  a.log = true;
  if (distinct.empty()) distinct.insert(1);
  double lo = *distinct.begin(), hi = *distinct.rbegin();
  if (distinct.size() <= 10) {
    a.ticks.assign(distinct.begin(), distinct.end());
  } else {
    int e0 = static_cast<int>(std::floor(std::log2(lo))), e1 = static_cast<int>(std::ceil(std::log2(hi)));
    int step = std::max(1, (e1 - e0 + 9) / 10);
    for (int e = e0; e <= e1; e += step) a.ticks.push_back(std::ldexp(1.0, e));
    lo = std::min(lo, a.ticks.front()), hi = std::max(hi, a.ticks.back());
  }
  // A margin of a fifth of an octave (or the single value's neighbourhood) so end points are not on the
  // frame.
  a.lo = lo / std::pow(2.0, hi > lo ? 0.2 : 1), a.hi = hi * std::pow(2.0, hi > lo ? 0.2 : 1);
  return a;
}

Axis log10_axis(double lo, double hi) {
  Axis a;
  a.log = true;
  lo = std::max(lo, 1e-12), hi = std::max(hi, lo * 1.01);
  a.lo = lo / 1.15, a.hi = hi * 1.15;
  int d0 = static_cast<int>(std::floor(std::log10(a.lo))), d1 = static_cast<int>(std::ceil(std::log10(a.hi)));
  bool dense = d1 - d0 <= 3;
  for (int d = d0; d <= d1; ++d)
    for (double m : dense ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
      double t = m * std::pow(10.0, d);
      if (t >= a.lo && t <= a.hi) a.ticks.push_back(t);
    }
  if (a.ticks.size() < 2) a.ticks = {lo, hi};
  return a;
}

std::string tick_text(double x, double y, double value, const char* anchor) {
  return fmt::format(
      "<text class=\"tick\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\" data-value=\"{:.6g}\">{}</text>", x,
      y, anchor, value, number(value));
}

const char* color_of(int series) {
  static const char* palette[] = {"#2f6db5", "#e07b39", "#3a9e5b", "#c0392b", "#8e6bbf",
                                  "#8c6d46", "#d35fa5", "#6d7b8a", "#b8a828", "#2ab0c4"};
  return palette[series % 10];
}

const char* dash_of(int series) {
  static const char* dashes[] = {"", "7 3", "2 3", "9 3 2 3", "4 4"};
  return dashes[series % 5];
}

std::string marker_path(int shape, double x, double y, double r) {
  switch (shape % 6) {
    case 0:
      return fmt::format(
          "M{:.1f},{:.1f}m-{:.1f},0a{:.1f},{:.1f} 0 1,0 {:.1f},0a{:.1f},{:.1f} 0 1,0 -{:.1f},0z", x, y, r, r,
          r, 2 * r, r, r, 2 * r);
    case 1: return fmt::format("M{:.1f},{:.1f}h{:.1f}v{:.1f}h-{:.1f}z", x - r, y - r, 2 * r, 2 * r, 2 * r);
    case 2:
      return fmt::format("M{:.1f},{:.1f}L{:.1f},{:.1f}L{:.1f},{:.1f}z", x, y - r * 1.2, x + r * 1.1,
                         y + r * 0.8, x - r * 1.1, y + r * 0.8);
    case 3:
      return fmt::format("M{:.1f},{:.1f}L{:.1f},{:.1f}L{:.1f},{:.1f}L{:.1f},{:.1f}z", x, y - r * 1.3, x + r,
                         y, x, y + r * 1.3, x - r, y);
    case 4:
      return fmt::format("M{:.1f},{:.1f}L{:.1f},{:.1f}L{:.1f},{:.1f}L{:.1f},{:.1f}z", x, y + r * 1.2,
                         x + r * 1.1, y - r * 0.8, x - r * 1.1, y - r * 0.8, x, y + r * 1.2);
    default:
      return fmt::format("M{:.1f},{:.1f}l{:.1f},{:.1f}m0,-{:.1f}l-{:.1f},{:.1f}", x - r, y - r, 2 * r, 2 * r,
                         2 * r, 2 * r, 2 * r);
  }
}

std::string legend(const std::vector<LegendItem>& items) {
  std::string out = "<div class=\"legend\">";
  for (const auto& it : items) {
    out += "<span class=\"legend-item\"><svg width=\"30\" height=\"14\" aria-hidden=\"true\">";
    if (it.marker < 0) {
      out += fmt::format("<rect x=\"8\" y=\"1\" width=\"12\" height=\"12\" fill=\"{}\"/>", it.color);
    } else {
      out += fmt::format(
          "<line x1=\"1\" y1=\"7\" x2=\"29\" y2=\"7\" stroke=\"{}\" stroke-width=\"2\" "
          "stroke-dasharray=\"{}\"/><path d=\"{}\" fill=\"{}\"/>",
          it.color, it.dash, marker_path(it.marker, 15, 7, 4), it.color);
    }
    out += fmt::format("</svg>{}</span>", esc(it.name));
  }
  return out + "</div>";
}

std::string card(const std::string& id, const std::string& heading, const std::string& body,
                 const std::string& note, bool wide) {
  return fmt::format("<section class=\"card{}\" id=\"{}\"><h2>{}</h2>{}{}</section>\n", wide ? " wide" : "",
                     id, esc(heading), body, note.empty() ? "" : "<p class=\"note\">" + note + "</p>");
}

std::string table_html(const std::string& id, const Table& t) {
  std::string out =
      fmt::format("<div class=\"tablewrap\"><table class=\"sortable\" id=\"{}\"><thead><tr>", id);
  for (const auto& h : t.head) out += "<th>" + esc(h) + "</th>";
  out += "</tr></thead><tbody>";
  for (size_t r = 0; r < t.rows.size(); ++r) {
    std::string cls = r < t.row_class.size() ? t.row_class[r] : "";
    out += cls.empty() ? "<tr>" : "<tr class=\"" + cls + "\">";
    for (size_t c = 0; c < t.rows[r].size(); ++c) {
      bool num = c < t.numeric.size() && t.numeric[c];
      out += (num ? "<td>" : "<td class=\"text\">") + t.rows[r][c] + "</td>";
    }
    out += "</tr>";
  }
  return out + "</tbody></table></div>\n";
}

}  // namespace podsim::report::html
