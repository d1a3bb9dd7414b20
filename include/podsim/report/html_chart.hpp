// SVG charts of the HTML reports. Each returns `<svg class="chart" data-kind=...>` plus, where it has
// one, its HTML legend. Labels are written in full (the chart widens its label column instead of
// cutting them); every mark carries an SVG <title> tooltip with units.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "podsim/report/html_svg.hpp"

namespace podsim::report::html {

// One bar per item, horizontal (labels of any length stay readable). `best` bars are drawn in the
// highlight colour with a star; `failed` items have no bar and show `failed_text` instead.
struct Bar {
  std::string label;
  double value = 0;
  std::string tooltip;
  bool best = false, failed = false;
  std::string failed_text;
};
std::string hbar_chart(const std::vector<Bar>& bars, const std::string& value_label);

// Stacked horizontal bars: one per item, a segment per category, and where `limit` is set a red tick
// (memory capacity). `failed_text` is written after the bar (an item that did not run).
struct Part {
  std::string name, color;
};
struct Stack {
  std::string label;
  std::vector<double> values;  // per category
  std::optional<double> limit;
  std::string failed_text;
};
std::string stacked_chart(const std::vector<Part>& categories, const std::vector<Stack>& stacks,
                          const std::string& unit, const std::string& limit_name = "");

// Lines through points, one series each, with its own marker and dash so overlapping series stay
// visible (and a small horizontal offset per series where points coincide); legend below the chart.
struct Series {
  std::string name;
  std::vector<double> x, y;
  std::vector<std::string> tooltips;  // per point
};
struct LineOptions {
  std::string x_label, y_label;
  bool log_x = true;
  bool y_from_zero = true;
};
std::string line_chart(const std::vector<Series>& series, const LineOptions& options);

// A grid of cells coloured by value (higher = darker), the value written in each; cells without a value
// show their `mark` (OOM, invalid, not in the study). Colour legend below.
struct HeatCell {
  std::optional<double> value;
  std::string mark, tooltip;
  bool best = false;
};
struct Heatmap {
  std::string x_key, y_key, unit;
  std::vector<std::string> xs, ys;
  std::vector<std::vector<HeatCell>> cells;  // [y][x]
};
std::string heatmap_chart(const Heatmap& h);

}  // namespace podsim::report::html
