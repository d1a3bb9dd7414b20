// The one-step timeline of the single-run report (html_gantt.hpp).
#include "podsim/report/html_gantt.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>

#include "podsim/report/html_svg.hpp"

namespace podsim::report::html {

const char* category_color(plan::Category c) {
  switch (c) {
    case plan::Category::compute: return "#2f6db5";
    case plan::Category::tp: return "#e07b39";
    case plan::Category::ep: return "#d35fa5";
    case plan::Category::optimizer: return "#8c6d46";
    case plan::Category::pp: return "#3a9e5b";
    case plan::Category::stream: return "#2ab0c4";
    case plan::Category::storage: return "#b8a828";
    case plan::Category::dp: return "#8e6bbf";
    case plan::Category::cp: return "#c0392b";
    default: return "#6d7b8a";
  }
}

namespace {

constexpr double kX0 = 110, kWidth = 1060, kDeviceRow = 18, kCommRow = 9;
constexpr int kMaxCommRows = 3, kMaxLanes = 32;

struct Slice {
  double begin = 0, end = 0;
  plan::Category cat{};
  std::string what;  // for a single slice's tooltip
};

// Consecutive slices drawn as one rectangle: same category and touching, or all within a few pixels.
struct Group {
  double begin = 0, end = 0;
  std::array<double, plan::kCategories> seconds{};
  int count = 0;
  std::string what;
  plan::Category dominant() const {
    return static_cast<plan::Category>(std::max_element(seconds.begin(), seconds.end()) - seconds.begin());
  }
};

std::vector<Group> coalesce(std::vector<Slice> slices, double px) {
  std::sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) { return a.begin < b.begin; });
  std::vector<Group> out;
  for (const auto& s : slices) {
    bool join = false;
    if (!out.empty() && s.begin - out.back().end < px) {
      const Group& g = out.back();
      bool same = g.count > 0 && g.dominant() == s.cat && g.seconds[static_cast<int>(s.cat)] > 0;
      join = same || (s.end - g.begin < 4 * px);
    }
    if (!join) out.push_back({s.begin, s.end, {}, 0, s.what});
    Group& g = out.back();
    g.end = std::max(g.end, s.end);
    g.seconds[static_cast<int>(s.cat)] += s.end - s.begin;
    g.count++;
  }
  return out;
}

std::string tooltip(const std::string& lane, const Group& g) {
  if (g.count == 1)
    return fmt::format("{}: {} \u2014 {} ms ({:.4f} to {:.4f} s)", lane, g.what,
                       number(1e3 * (g.end - g.begin)), g.begin, g.end);
  std::string parts;
  for (int c = 0; c < plan::kCategories; ++c)
    if (g.seconds[c] > 0)
      parts += fmt::format("{}{} {} ms", parts.empty() ? "" : ", ",
                           plan::to_string(static_cast<plan::Category>(c)), number(1e3 * g.seconds[c]));
  return fmt::format("{}: {} slices, {:.4f} to {:.4f} s: {}", lane, g.count, g.begin, g.end, parts);
}

// Packs communication slices into at most kMaxCommRows rows so that concurrent streams stay visible.
std::vector<std::vector<Slice>> pack(std::vector<Slice> slices) {
  std::sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) { return a.begin < b.begin; });
  std::vector<std::vector<Slice>> rows;
  std::vector<double> ends;
  for (auto& s : slices) {
    size_t r = 0;
    while (r < ends.size() && ends[r] > s.begin + 1e-12) ++r;
    if (r == ends.size() && rows.size() == kMaxCommRows) r = kMaxCommRows - 1;
    if (r == rows.size()) rows.emplace_back(), ends.push_back(0);
    ends[r] = std::max(ends[r], s.end);
    rows[r].push_back(std::move(s));
  }
  return rows;
}

struct Lane {
  std::vector<Slice> device, comm;
};

std::string slice_what(const plan::Task& t, bool comm) {
  std::string what = plan::to_string(t.kind);
  if (t.microbatch >= 0) what += fmt::format(" microbatch {}", t.microbatch);
  if (t.chunk >= 0) what += fmt::format(" chunk {}", t.chunk);
  return what + fmt::format(", {}", plan::to_string(comm ? t.comm_category : t.compute_category));
}

std::vector<Lane> lanes_of(const RunResult& r) {
  const auto& g = r.plan.graph;
  std::vector<Lane> lanes(std::min(g.stages, kMaxLanes));
  for (size_t i = 0; i < g.tasks.size() && i < r.replay.tasks.size(); ++i) {
    const auto& t = g.tasks[i];
    const auto& tt = r.replay.tasks[i];
    double c = t.compute_seconds > 0 ? tt.compute_end : tt.start;
    bool device = t.stream >= 0 && g.streams[t.stream].device_busy;
    for (int lane = 0; lane < static_cast<int>(lanes.size()); ++lane) {
      bool mine =
          t.stage == lane || t.stage < 0 || (t.peer_stage == lane && t.kind == plan::TaskKind::transfer);
      if (!mine) continue;
      auto& target = device && t.stage == lane ? lanes[lane].device : lanes[lane].comm;
      if (c > tt.start) target.push_back({tt.start, c, t.compute_category, slice_what(t, false)});
      if (tt.end > c) target.push_back({c, tt.end, t.comm_category, slice_what(t, true)});
    }
  }
  return lanes;
}

// Groups without a tooltip of their own are drawn, per row and category, as one <path> with one tooltip: the
// pixels a rect each would, but a step of tens of thousands of short slices stays a small file (a rect and
// its tooltip are ~200 bytes, a stroke ~17, a filled subpath ~30). Under a pixel: a stroke of kThinStroke px
// (what a rect of 0.6 to 1 px shows); wider ones that lose their tooltip to kMaxTooltipRects: a filled box.
constexpr double kThinPx = 1.0, kThinStroke = 0.8;
constexpr size_t kMaxTooltipRects = 1200;

struct Row {
  std::string lane;
  double y = 0, h = 0;
  std::vector<Group> groups;
};

std::string thin_path(bool stroke, plan::Category cat, const std::string& d, const std::string& lane,
                      int count, double seconds, double below_px) {
  std::string paint = stroke ? fmt::format("fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"",
                                           category_color(cat), kThinStroke)
                             : fmt::format("fill=\"{}\"", category_color(cat));
  return fmt::format(
      "<path class=\"{}\" data-category=\"{}\" d=\"{}\" {}><title>{}: {} short slices, mostly {} (each "
      "under {} px), {} ms in all</title></path>",
      stroke ? "slice-thin" : "slice-small", plan::to_string(cat), d, paint, esc(lane), count,
      plan::to_string(cat), number(below_px), number(1e3 * seconds));
}

std::string rects(const Row& row, double px, double tooltip_px) {
  std::string out;
  std::array<std::array<std::string, plan::kCategories>, 2> d;  // [stroke, filled][category]
  std::array<std::array<double, plan::kCategories>, 2> seconds{};
  std::array<std::array<int, plan::kCategories>, 2> count{};
  const double y = std::round(row.y * 10) / 10;
  for (const auto& gr : row.groups) {
    double w = (gr.end - gr.begin) / px, x = kX0 + gr.begin / px;
    int c = static_cast<int>(gr.dominant());
    if (w >= tooltip_px) {
      out += fmt::format(
          "<rect class=\"slice\" data-category=\"{}\" x=\"{:.1f}\" y=\"{:g}\" width=\"{:.2f}\" "
          "height=\"{:g}\" fill=\"{}\"><title>{}</title></rect>",
          plan::to_string(gr.dominant()), x, y, w, row.h, category_color(gr.dominant()),
          esc(tooltip(row.lane, gr)));
      continue;
    }
    int k = w < kThinPx ? 0 : 1;
    d[k][c] += k == 0 ? fmt::format("M{:.1f} {:g}v{:g}", x + w / 2, y, row.h)
                      : fmt::format("M{:.1f} {:g}h{:.1f}v{:g}h-{:.1f}z", x, y, w, row.h, w);
    for (double sec : gr.seconds) seconds[k][c] += sec;
    count[k][c] += gr.count;
  }
  for (int k = 0; k < 2; ++k)
    for (int c = 0; c < plan::kCategories; ++c)
      if (!d[k][c].empty())
        out += thin_path(k == 0, static_cast<plan::Category>(c), d[k][c], row.lane, count[k][c],
                         seconds[k][c], k == 0 ? kThinPx : tooltip_px);
  return out;
}

// The narrowest width (px, at least kThinPx) whose groups keep a rect and tooltip of their own: all of them
// when there are at most kMaxTooltipRects, else the widest kMaxTooltipRects.
double tooltip_width(const std::vector<std::vector<Row>>& lanes, double px) {
  std::vector<double> widths;
  for (const auto& rows : lanes)
    for (const auto& row : rows)
      for (const auto& gr : row.groups) widths.push_back((gr.end - gr.begin) / px);
  if (widths.size() <= kMaxTooltipRects) return kThinPx;
  std::nth_element(widths.begin(), widths.begin() + kMaxTooltipRects, widths.end(), std::greater<>());
  return std::max(kThinPx, std::nextafter(widths[kMaxTooltipRects], 1e300));
}

std::string lane_title(const RunResult& r, size_t lane, const std::string& name) {
  if (lane >= r.stages.size()) return name;
  const auto& s = r.stages[lane];
  std::string parts;
  for (auto c : plan::kChargeOrder)
    if (s[c] > 0) parts += fmt::format(", {} {} s", plan::to_string(c), number(s[c]));
  return fmt::format("{}: total {} s{}, idle {} s", name, number(s.total()), parts, number(s.idle));
}

}  // namespace

std::string gantt_chart(const RunResult& r) {
  const auto& g = r.plan.graph;
  if (!r.ok() || r.step_time() <= 0 || g.tasks.empty()) return "";
  double px = r.step_time() / kWidth;  // seconds per pixel
  std::vector<Lane> lanes = lanes_of(r);
  std::vector<std::vector<Row>> rows(lanes.size());
  std::vector<std::string> names(lanes.size());
  std::vector<double> top(lanes.size()), height(lanes.size());
  double y = 8;
  for (size_t l = 0; l < lanes.size(); ++l) {
    names[l] = l < g.lane_names.size() ? g.lane_names[l] : fmt::format("stage {}", l);
    auto comm_rows = pack(lanes[l].comm);
    top[l] = y, height[l] = kDeviceRow + kCommRow * comm_rows.size() + 2;
    rows[l].push_back({names[l], y, kDeviceRow - 2, coalesce(lanes[l].device, px)});
    for (size_t k = 0; k < comm_rows.size(); ++k)
      rows[l].push_back({names[l] + " (communication)", y + kDeviceRow + kCommRow * k, kCommRow - 1,
                         coalesce(comm_rows[k], px)});
    y += height[l] + 4;
  }
  const double tooltip_px = tooltip_width(rows, px);
  std::string body;
  for (size_t l = 0; l < lanes.size(); ++l) {
    body += fmt::format("<g class=\"lane\" data-name=\"{}\"><title>{}</title>", esc(names[l]),
                        esc(lane_title(r, l, names[l])));
    body +=
        fmt::format("<rect class=\"idle\" x=\"{}\" y=\"{:.1f}\" width=\"{}\" height=\"{:.1f}\" fill=\"{}\"/>",
                    kX0, top[l], kWidth, height[l] - 2, kIdleColor);
    body += fmt::format("<text class=\"label\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>", kX0 - 6,
                        top[l] + 13, esc(names[l]));
    for (const auto& row : rows[l]) body += rects(row, px, tooltip_px);
    body += "</g>";
  }
  Axis a = linear_axis(0, r.step_time());
  std::string axis;
  for (double t : a.ticks)
    if (t <= r.step_time() * 1.0001) axis += tick_text(kX0 + t / px, y + 12, t, "middle");
  axis += fmt::format(
      "<text class=\"axis-title\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"middle\">seconds into the step "
      "(step time {} s)</text>",
      kX0 + kWidth / 2, y + 30, number(r.step_time()));
  std::string out = fmt::format(
      "<svg class=\"chart\" data-kind=\"gantt\" data-lanes=\"{}\" viewBox=\"0 0 {} {:.0f}\" "
      "role=\"img\">",
      lanes.size(), kX0 + kWidth + 20, y + 38);
  out += body + axis + "</svg>";
  std::vector<LegendItem> items;
  std::array<bool, plan::kCategories> used{};
  for (const auto& lane : lanes)
    for (const auto* v : {&lane.device, &lane.comm})
      for (const auto& s : *v) used[static_cast<int>(s.cat)] = true;
  for (auto c : plan::kChargeOrder)
    if (used[static_cast<int>(c)]) items.push_back({plan::to_string(c), category_color(c)});
  items.push_back({"idle (bubble)", kIdleColor});
  return out + legend(items);
}

}  // namespace podsim::report::html
