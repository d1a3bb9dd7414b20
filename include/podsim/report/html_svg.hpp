// Building blocks of the HTML reports: escaping, numbers, axes with ticks, legends, the page shell and
// tables. Every chart is inline SVG written here (no script draws it), so a report is one self-contained
// file and a test can read what it shows.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace podsim::report::html {

std::string esc(std::string_view s);  // text and attribute values
// 4 significant digits; k / M / G for large values ("113.2k"), plain below 10000.
std::string number(double v);

// A value axis: [lo, hi] maps to a pixel range; ticks lie within [lo, hi].
struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  std::vector<double> ticks;
  double map(double v, double px0, double px1) const;  // px0 at lo, px1 at hi
};
// Linear, with 1-2-5 ticks; starts at 0 when `from_zero` (bars, throughputs) else near the data.
Axis linear_axis(double lo, double hi, bool from_zero = true);
// Base-2 log: ticks at the data's distinct values when there are at most 10 of them, else powers of 2
// covering them.
Axis log2_axis(const std::vector<double>& values);
// Base-10 log with ticks at 1-2-5 multiples of the decades covering [lo, hi].
Axis log10_axis(double lo, double hi);

// The SVG <text class="tick"> of one tick (data-value carries the number for tests and readers).
std::string tick_text(double x, double y, double value, const char* anchor);

struct LegendItem {
  std::string name, color;
  int marker = -1;   // marker_path shape; -1: a filled box
  std::string dash;  // stroke-dasharray of the series line, "" for solid
  LegendItem(std::string n, std::string c, int m = -1, std::string d = "")
      : name(std::move(n)), color(std::move(c)), marker(m), dash(std::move(d)) {}
};
// An HTML legend below a chart: flex-wrapped, so it never runs out of its card.
std::string legend(const std::vector<LegendItem>& items);
// Marker `shape` (0 circle, 1 square, 2 triangle, 3 diamond, 4 cross, ...) centred at (x, y).
std::string marker_path(int shape, double x, double y, double r);
const char* dash_of(int series);   // "", "6 3", "2 3", ...
const char* color_of(int series);  // palette

// A card: heading, body (an SVG chart and its legend) and an optional note.
std::string card(const std::string& id, const std::string& heading, const std::string& body,
                 const std::string& note = "", bool wide = false);

// A table whose cells are already escaped HTML; `numeric[i]` right-aligns column i. Sortable by header click.
struct Table {
  std::vector<std::string> head;
  std::vector<bool> numeric;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row_class;  // "" or "bad" / "best" per row
};
std::string table_html(const std::string& id, const Table& t);

// The page: title, subtitle, body (cards), `charts` (SVG charts drawn, recorded as data-rendered).
std::string page(const std::string& title, const std::string& subtitle, const std::string& body, int charts);

}  // namespace podsim::report::html
