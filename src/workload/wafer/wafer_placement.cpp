#include "podsim/workload/wafer/wafer_placement.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace podsim::workload {
namespace {

// Integers >= 1 proportional to `weights` that add up to `total` (largest remainder); empty if impossible.
std::vector<int> apportion(const std::vector<double>& weights, int total) {
  const int n = static_cast<int>(weights.size());
  if (n == 0 || n > total) return {};
  double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<int> out(n, 1);
  int left = total - n;  // one each first, the rest in proportion
  std::vector<double> exact(n);
  std::vector<std::pair<double, int>> remainders;
  int given = 0;
  for (int i = 0; i < n; ++i) {
    exact[i] = std::max(0.0, weights[i] / sum * total - 1);
    int whole = std::min(left - given, static_cast<int>(std::floor(exact[i])));
    out[i] += whole;
    given += whole;
    remainders.emplace_back(exact[i] - whole, i);
  }
  std::sort(remainders.begin(), remainders.end(), [](auto a, auto b) { return a.first > b.first; });
  for (size_t k = 0; given < left; k = (k + 1) % remainders.size(), ++given) out[remainders[k].second]++;
  return out;
}

// Ideal areas: proportional to work, raised to the memory minimum where needed (water filling).
std::optional<std::vector<double>> target_areas(const std::vector<double>& work,
                                                const std::vector<double>& min_cores, double cores) {
  const size_t n = work.size();
  std::vector<bool> pinned(n, false);
  std::vector<double> area(n);
  for (;;) {
    double rest = cores, free_work = 0;
    for (size_t i = 0; i < n; ++i) (pinned[i] ? rest -= min_cores[i] : free_work += work[i]);
    if (rest < 0) return std::nullopt;
    bool changed = false;
    for (size_t i = 0; i < n; ++i) {
      if (pinned[i]) {
        area[i] = min_cores[i];
        continue;
      }
      area[i] = free_work > 0 ? rest * work[i] / free_work : rest / n;
      if (area[i] < min_cores[i]) pinned[i] = changed = true;
    }
    if (!changed) return area;
  }
}

}  // namespace

namespace {

// Blocks 0..n-1 in order, cut into k contiguous bands of about equal target area (fewer if impossible).
std::vector<std::vector<int>> cut_bands(const std::vector<double>& target, double cores, int k) {
  const int n = static_cast<int>(target.size());
  std::vector<std::vector<int>> bands(1);
  double cumulative = 0;
  for (int b = 0; b < n; ++b) {
    double band_end = cores * static_cast<double>(bands.size()) / k;
    int blocks_left = n - b, bands_left = k - static_cast<int>(bands.size());
    bool start_new = !bands.back().empty() && bands_left > 0 &&
                     (cumulative + target[b] / 2 > band_end || blocks_left <= bands_left);
    if (start_new) bands.emplace_back();
    bands.back().push_back(b);
    cumulative += target[b];
  }
  return bands;
}

// Whole-core rectangles for the bands (heights by band area, widths by block area, snaking so that
// consecutive blocks stay neighbours), or nothing when one comes out smaller than its memory needs.
std::optional<Placement> lay_out_bands(const std::vector<std::vector<int>>& bands,
                                       const std::vector<double>& target,
                                       const std::vector<double>& min_cores,
                                       const std::vector<double>& sized_min, int columns, int rows) {
  const int n = static_cast<int>(target.size()), k = static_cast<int>(bands.size());
  std::vector<double> band_area;
  for (const auto& band : bands) {
    double a = 0;
    for (int b : band) a += target[b];
    band_area.push_back(a);
  }
  std::vector<int> heights = apportion(band_area, rows);
  if (heights.empty()) return std::nullopt;
  Placement p;
  p.bands = k;
  p.regions.resize(n);
  p.band.resize(n);
  p.target_cores = target;
  for (int b = 0; b < n; ++b) p.sized_by_memory.push_back(target[b] <= sized_min[b] * (1 + 1e-12));
  int row = 0;
  for (int i = 0; i < k; ++i) {
    std::vector<double> w;
    for (int b : bands[i]) w.push_back(target[b]);
    std::vector<int> widths = apportion(w, columns);
    if (widths.empty()) return std::nullopt;
    int column = i % 2 == 0 ? 0 : columns;  // snake: even bands left to right, odd right to left
    for (size_t j = 0; j < bands[i].size(); ++j) {
      int b = bands[i][j];
      if (i % 2 == 1) column -= widths[j];
      p.regions[b] = {column, row, widths[j], heights[i]};
      p.band[b] = i;
      if (i % 2 == 0) column += widths[j];
      if (static_cast<double>(p.regions[b].cores()) < min_cores[b]) return std::nullopt;
    }
    row += heights[i];
  }
  for (int b = 0; b + 1 < n; ++b) {
    const MeshRect &x = p.regions[b], &y = p.regions[b + 1];
    if (p.band[b] == p.band[b + 1]) {
      p.boundary_links.push_back(x.rows);
    } else {
      int overlap = std::min(x.column + x.columns, y.column + y.columns) - std::max(x.column, y.column);
      p.boundary_links.push_back(std::max(overlap, 1));
    }
  }
  return p;
}

// One attempt: ideal areas from `sized_min` (the memory minimum, possibly padded), rectangles checked against
// the true `min_cores`; the best over every band count.
std::optional<Placement> place_with_targets(const std::vector<double>& work,
                                            const std::vector<double>& min_cores,
                                            const std::vector<double>& sized_min, int columns, int rows) {
  const int n = static_cast<int>(work.size());
  const double cores = static_cast<double>(columns) * rows;
  auto target = target_areas(work, sized_min, cores);
  if (!target) return std::nullopt;
  std::optional<Placement> best;
  double best_slowest = 0, best_aspect = 0;
  for (int k = 1; k <= std::min(n, rows); ++k) {
    auto bands = cut_bands(*target, cores, k);
    if (static_cast<int>(bands.size()) != k) continue;
    auto p = lay_out_bands(bands, *target, min_cores, sized_min, columns, rows);
    if (!p) continue;
    double slowest = 0, aspect = 0;
    for (int b = 0; b < n; ++b) {
      const MeshRect& r = p->regions[b];
      slowest = std::max(slowest, work[b] / static_cast<double>(r.cores()));
      aspect = std::max(aspect, std::max<double>(r.columns, r.rows) / std::min<double>(r.columns, r.rows));
    }
    // The slowest region sets the pipeline's pace; among placements within 0.5% of the best pace, prefer
    // squarer regions (shorter paths across them, longer shared edges).
    bool better =
        !best || slowest < best_slowest * 0.995 || (slowest <= best_slowest * 1.005 && aspect < best_aspect);
    if (better) {
      best = std::move(p);
      best_slowest = slowest;
      best_aspect = aspect;
    }
  }
  return best;
}

}  // namespace

std::optional<Placement> place_blocks(const std::vector<double>& work, const std::vector<double>& min_cores,
                                      int columns, int rows) {
  // Whole-core rectangles lose area to rounding, so a block sized exactly to its memory can come out a few
  // cores short once the wafer is mostly full. Only then pad the memory minimum of every block (up to 25%,
  // which is still a fill the wafer can hold) and take area from the blocks sized by their work instead.
  for (double pad : {1.0, 1.005, 1.01, 1.02, 1.05, 1.1, 1.25}) {
    std::vector<double> sized_min = min_cores;
    for (double& m : sized_min) m *= pad;
    if (auto p = place_with_targets(work, min_cores, sized_min, columns, rows)) return p;
  }
  return std::nullopt;
}

}  // namespace podsim::workload
