#include <algorithm>

#include "podsim/report/run_result.hpp"

namespace podsim::report {
namespace {

using workload::Category;

// Priority when a stage does several things at once (lower wins).
int priority(Category c) {
  switch (c) {
    case Category::compute:
      return 0;
    case Category::tp:
      return 1;
    case Category::optimizer:
      return 2;
    case Category::pp:
      return 3;
    case Category::dp:
      return 4;
    default:
      return 5;
  }
}

struct Interval {
  double begin, end;
  Category category;
};

}  // namespace

double RunResult::tflops_per_device() const {
  return step_time() > 0 ? step.hardware_flops / devices / step_time() / 1e12 : 0;
}
double RunResult::mfu() const {
  return step_time() > 0 ? step.model_flops / devices / step_time() / step.peak_flops : 0;
}
double RunResult::hfu() const {
  return step_time() > 0 ? step.hardware_flops / devices / step_time() / step.peak_flops : 0;
}
double RunResult::memory_per_device() const {
  double peak = 0;
  for (const auto& m : step.memory) peak = std::max(peak, m.total());
  return peak;
}
double RunResult::tokens_per_s() const {
  return step_time() > 0 ? step.tokens_per_step / step_time() : 0;
}

std::vector<StageBreakdown> stage_breakdown(const workload::TaskGraph& graph,
                                            const engine::ReplayResult& replay) {
  std::vector<std::vector<Interval>> per_stage(graph.stages);
  auto add = [&](int stage, double b, double e, Category c) {
    if (e <= b) return;
    if (stage < 0) {
      for (auto& list : per_stage) list.push_back({b, e, c});
    } else if (stage < graph.stages) {
      per_stage[stage].push_back({b, e, c});
    }
  };
  for (size_t i = 0; i < graph.tasks.size(); ++i) {
    const auto& t = graph.tasks[i];
    const auto& times = replay.tasks[i];
    bool on_device = t.stream >= 0 && graph.streams[t.stream].device_busy;
    if (on_device) add(t.stage, times.start, times.start + t.compute_seconds, t.compute_category);
    add(t.stage, times.compute_end, times.end, t.comm_category);
    if (t.peer_stage >= 0 && t.peer_stage != t.stage)
      add(t.peer_stage, times.compute_end, times.end, t.comm_category);
  }
  std::vector<StageBreakdown> out;
  for (int s = 0; s < graph.stages; ++s) {
    StageBreakdown b;
    b.stage = s;
    auto& list = per_stage[s];
    // Sweep over boundaries; at each elementary segment charge the highest-priority active category.
    std::vector<std::pair<double, int>> events;  // time, +/- (priority + 1)
    for (const auto& iv : list) {
      events.push_back({iv.begin, priority(iv.category) + 1});
      events.push_back({iv.end, -(priority(iv.category) + 1)});
    }
    std::sort(events.begin(), events.end());
    std::array<int, 6> active{};
    double last = 0;
    double charged[6] = {0, 0, 0, 0, 0, 0};
    for (const auto& [time, delta] : events) {
      if (time > last) {
        int best = 5;
        for (int k = 0; k < 5; ++k)
          if (active[k] > 0) {
            best = k;
            break;
          }
        charged[best] += time - last;
        last = time;
      }
      active[std::abs(delta) - 1] += delta > 0 ? 1 : -1;
    }
    charged[5] += std::max(0.0, replay.makespan - last);
    b.compute = charged[0];
    b.tp = charged[1];
    b.optimizer = charged[2];
    b.pp = charged[3];
    b.dp = charged[4];
    b.bubble = charged[5];
    out.push_back(b);
  }
  return out;
}

StageBreakdown mean_breakdown(const std::vector<StageBreakdown>& stages) {
  StageBreakdown m;
  m.stage = -1;
  if (stages.empty()) return m;
  for (const auto& s : stages) {
    m.compute += s.compute;
    m.tp += s.tp;
    m.optimizer += s.optimizer;
    m.pp += s.pp;
    m.dp += s.dp;
    m.bubble += s.bubble;
  }
  double n = static_cast<double>(stages.size());
  m.compute /= n, m.tp /= n, m.optimizer /= n, m.pp /= n, m.dp /= n, m.bubble /= n;
  return m;
}

}  // namespace podsim::report
