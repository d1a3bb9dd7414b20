// The one-step timeline of the single-run report (html_gantt.hpp).
#include "podsim/report/html_gantt.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
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

// Groups narrower than this are drawn, per category, as one <path> of strokes with one tooltip: the
// pixels a rect each would (0.6 to 1 px wide), but a step of tens of thousands of short communication
// slices stays well under a megabyte (a rect and its tooltip are ~200 bytes, a stroke ~17).
constexpr double kThinPx = 1.0, kThinStroke = 0.8;

std::string thin_paths(const std::vector<const Group*>& thin, const std::string& lane, double y, double h,
                       double px) {
  std::array<std::string, plan::kCategories> d;
  std::array<double, plan::kCategories> seconds{};
  std::array<int, plan::kCategories> count{};
  for (const Group* gr : thin) {
    int c = static_cast<int>(gr->dominant());
    // A vertical stroke of kThinStroke px through the group's middle: what a rect of under a pixel shows.
    double mid = kX0 + (gr->begin + gr->end) / 2 / px;
    d[c] += fmt::format("M{:.1f} {:g}v{:g}", mid, std::round(y * 10) / 10, h);
    for (int k = 0; k < plan::kCategories; ++k) seconds[c] += gr->seconds[k];
    count[c] += gr->count;
  }
  std::string out;
  for (int c = 0; c < plan::kCategories; ++c) {
    if (d[c].empty()) continue;
    auto cat = static_cast<plan::Category>(c);
    out += fmt::format(
        "<path class=\"slice-thin\" data-category=\"{}\" d=\"{}\" fill=\"none\" stroke=\"{}\" "
        "stroke-width=\"{}\"><title>{}: {} short slices, "
        "mostly {} (each under a pixel), {} ms in all</title></path>",
        plan::to_string(cat), d[c], category_color(cat), kThinStroke, esc(lane), count[c],
        plan::to_string(cat), number(1e3 * seconds[c]));
  }
  return out;
}

std::string rects(const std::vector<Group>& groups, const std::string& lane, double y, double h, double px) {
  std::string out;
  std::vector<const Group*> thin;
  for (const auto& gr : groups) {
    if ((gr.end - gr.begin) / px < kThinPx) {
      thin.push_back(&gr);
      continue;
    }
    out += fmt::format(
        "<rect class=\"slice\" data-category=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.2f}\" "
        "height=\"{}\" fill=\"{}\"><title>{}</title></rect>",
        plan::to_string(gr.dominant()), kX0 + gr.begin / px, y, (gr.end - gr.begin) / px, h,
        category_color(gr.dominant()), esc(tooltip(lane, gr)));
  }
  return out + thin_paths(thin, lane, y, h, px);
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
  std::string body;
  double y = 8;
  for (size_t l = 0; l < lanes.size(); ++l) {
    std::string name = l < g.lane_names.size() ? g.lane_names[l] : fmt::format("stage {}", l);
    auto comm_rows = pack(lanes[l].comm);
    double h = kDeviceRow + kCommRow * comm_rows.size() + 2;
    body += fmt::format("<g class=\"lane\" data-name=\"{}\"><title>{}</title>", esc(name),
                        esc(lane_title(r, l, name)));
    body +=
        fmt::format("<rect class=\"idle\" x=\"{}\" y=\"{:.1f}\" width=\"{}\" height=\"{:.1f}\" fill=\"{}\"/>",
                    kX0, y, kWidth, h - 2, kIdleColor);
    body += fmt::format("<text class=\"label\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>", kX0 - 6,
                        y + 13, esc(name));
    body += rects(coalesce(lanes[l].device, px), name, y, kDeviceRow - 2, px);
    for (size_t k = 0; k < comm_rows.size(); ++k)
      body += rects(coalesce(comm_rows[k], px), name + " (communication)", y + kDeviceRow + kCommRow * k,
                    kCommRow - 1, px);
    body += "</g>";
    y += h + 4;
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
