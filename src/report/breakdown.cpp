#include <algorithm>
#include <cstdlib>

#include "podsim/report/run_result.hpp"

namespace podsim::report {
namespace {

using workload::Category;
using workload::kCategories;

// Position of each category in the charge order (lower wins).
int priority(Category c) {
  for (int i = 0; i < kCategories; ++i)
    if (workload::kChargeOrder[i] == c) return i;
  return kCategories;
}

struct Interval {
  double begin, end;
  Category category;
};

}  // namespace

double StageBreakdown::total() const {
  double t = idle;
  for (double s : seconds) t += s;
  return t;
}

double RunResult::tflops_per_device() const {
  return step_time() > 0 ? plan.hardware_flops / devices() / step_time() / 1e12 : 0;
}
double RunResult::mfu() const {
  return step_time() > 0 && plan.peak_flops > 0 ? plan.model_flops / devices() / step_time() / plan.peak_flops
                                                : 0;
}
double RunResult::mfu_causal() const {
  double flops = plan.model_flops_causal > 0 ? plan.model_flops_causal : plan.model_flops;
  return step_time() > 0 && plan.peak_flops > 0 ? flops / devices() / step_time() / plan.peak_flops : 0;
}
double RunResult::hfu() const {
  return step_time() > 0 && plan.peak_flops > 0
             ? plan.hardware_flops / devices() / step_time() / plan.peak_flops
             : 0;
}
double RunResult::memory_per_device() const {
  double peak = 0;
  for (const auto& m : plan.memory) peak = std::max(peak, m.total());
  return peak;
}
std::optional<MemoryShortfall> RunResult::out_of_memory() const {
  if (status != "out_of_memory") return std::nullopt;
  if (memory_shortfall) return memory_shortfall;
  if (memory_per_device() > device_memory_capacity)
    return MemoryShortfall{"device memory", memory_per_device(), device_memory_capacity};
  return std::nullopt;
}
double RunResult::tokens_per_s() const {
  return step_time() > 0 ? plan.tokens_per_step / step_time() : 0;
}
double RunResult::samples_per_s() const {
  return step_time() > 0 ? plan.samples_per_step / step_time() : 0;
}
std::string RunResult::setting(const std::string& key) const {
  for (const auto& [k, v] : plan.settings)
    if (k == key) return v;
  return "";
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
    // Sweep over interval boundaries; each elementary segment is charged to its highest-priority activity.
    std::vector<std::pair<double, int>> events;  // time, +/- (priority + 1)
    for (const auto& iv : per_stage[s]) {
      events.push_back({iv.begin, priority(iv.category) + 1});
      events.push_back({iv.end, -(priority(iv.category) + 1)});
    }
    std::sort(events.begin(), events.end());
    std::array<int, kCategories> active{};
    double last = 0;
    for (const auto& [time, delta] : events) {
      if (time > last) {
        int best = -1;
        for (int k = 0; k < kCategories && best < 0; ++k)
          if (active[k] > 0) best = k;
        if (best < 0)
          b.idle += time - last;
        else
          b.seconds[static_cast<int>(workload::kChargeOrder[best])] += time - last;
        last = time;
      }
      active[std::abs(delta) - 1] += delta > 0 ? 1 : -1;
    }
    b.idle += std::max(0.0, replay.makespan - last);
    out.push_back(b);
  }
  return out;
}

StageBreakdown mean_breakdown(const std::vector<StageBreakdown>& stages) {
  StageBreakdown m;
  m.stage = -1;
  if (stages.empty()) return m;
  for (const auto& s : stages) {
    for (int k = 0; k < kCategories; ++k) m.seconds[k] += s.seconds[k];
    m.idle += s.idle;
  }
  double n = static_cast<double>(stages.size());
  for (auto& v : m.seconds) v /= n;
  m.idle /= n;
  return m;
}

}  // namespace podsim::report
