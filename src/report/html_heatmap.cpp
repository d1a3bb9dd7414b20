// The heatmap of a two-key grid study (html_chart.hpp heatmap_chart).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "podsim/report/html_chart.hpp"

namespace podsim::report::html {
namespace {

// Light to dark blue as t goes 0 -> 1 (higher values darker: more throughput).
std::string shade(double t) {
  t = std::clamp(t, 0.0, 1.0);
  auto mix = [t](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * t)); };
  return fmt::format("#{:02x}{:02x}{:02x}", mix(0xea, 0x1f), mix(0xf1, 0x4e), mix(0xfb, 0x8c));
}

std::string colour_legend(double x, double y, double lo, double hi, const std::string& unit) {
  std::string out = "<g class=\"colour-legend\"><defs><linearGradient id=\"heat-scale\">";
  for (int i = 0; i <= 4; ++i)
    out += fmt::format("<stop offset=\"{}%\" stop-color=\"{}\"/>", 25 * i, shade(i / 4.0));
  out += "</linearGradient></defs>";
  out += fmt::format(
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"200\" height=\"12\" fill=\"url(#heat-scale)\"/>", x, y);
  out += tick_text(x, y + 26, lo, "start") + tick_text(x + 200, y + 26, hi, "end");
  out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text></g>", x + 210, y + 11, esc(unit));
  return out;
}

}  // namespace

std::string heatmap_chart(const Heatmap& h) {
  double lo = 1e300, hi = -1e300;
  for (const auto& row : h.cells)
    for (const auto& c : row)
      if (c.value) lo = std::min(lo, *c.value), hi = std::max(hi, *c.value);
  if (lo > hi) lo = 0, hi = 1;
  size_t ylab = std::max(h.y_key.size(), size_t{4});
  for (const auto& y : h.ys) ylab = std::max(ylab, y.size());
  const double cw = 78, ch = 34, x0 = ylab * 7.0 + 20, y0 = 40;
  double w = x0 + cw * h.xs.size() + 20, hh = y0 + ch * h.ys.size() + 56;
  std::string out = fmt::format(
      "<svg class=\"chart\" data-kind=\"heatmap\" data-columns=\"{}\" data-rows=\"{}\" viewBox=\"0 0 {:.0f} "
      "{:.0f}\" "
      "style=\"max-width:{:.0f}px\" role=\"img\">",
      h.xs.size(), h.ys.size(), std::max(w, 420.0), hh, std::max(w, 420.0) * 1.4);
  out += fmt::format("<text class=\"axis-title\" x=\"{:.1f}\" y=\"14\" text-anchor=\"middle\">{}</text>",
                     x0 + cw * h.xs.size() / 2, esc(h.x_key));
  out += fmt::format("<text class=\"axis-title\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>",
                     x0 - 8, y0 - 8, esc(h.y_key));
  for (size_t i = 0; i < h.xs.size(); ++i)
    out += fmt::format("<text class=\"label\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>",
                       x0 + cw * (i + 0.5), y0 - 8, esc(h.xs[i]));
  for (size_t j = 0; j < h.ys.size(); ++j) {
    double y = y0 + ch * j;
    out += fmt::format("<text class=\"label\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>",
                       x0 - 8, y + ch / 2 + 4, esc(h.ys[j]));
    for (size_t i = 0; i < h.xs.size(); ++i) {
      const HeatCell& c = j < h.cells.size() && i < h.cells[j].size() ? h.cells[j][i] : HeatCell{};
      double t = c.value ? (hi > lo ? (*c.value - lo) / (hi - lo) : 1) : 0;
      std::string fill = c.value ? shade(t) : "#f6eaea", text = c.value ? number(*c.value) : c.mark;
      out += fmt::format(
          "<g class=\"cell{}\" data-x=\"{}\" data-y=\"{}\"{}><rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{}\" "
          "height=\"{}\" fill=\"{}\" stroke=\"{}\" stroke-width=\"{}\"/>",
          c.best ? " best" : "", esc(h.xs[i]), esc(h.ys[j]),
          c.value ? fmt::format(" data-value=\"{:.6g}\"", *c.value) : " data-missing=\"1\"", x0 + cw * i + 1,
          y + 1, cw - 2, ch - 2, fill, c.best ? "#1d2733" : "white", c.best ? 2.5 : 1);
      out += fmt::format(
          "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" style=\"fill:{}\">{}{}</text>",
          x0 + cw * (i + 0.5), y + ch / 2 + 4, c.value ? (t > 0.55 ? "white" : "#1d2733") : "#9a3b3b",
          esc(text), c.best ? " \u2605" : "");
      out += fmt::format("<title>{}</title></g>", esc(c.tooltip));
    }
  }
  out += colour_legend(x0, y0 + ch * h.ys.size() + 14, lo, hi, h.unit);
  return out + "</svg>";
}

}  // namespace podsim::report::html
