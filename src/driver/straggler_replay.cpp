#include "podsim/driver/straggler_replay.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "podsim/core/error.hpp"
#include "podsim/plan/stage_speed.hpp"

namespace podsim::driver {
namespace {

using Pattern = std::vector<double>;  // speed per pipeline stage

// Per lockstep group of replicas: the slowest device of each stage. Also counts slow replicas/devices.
std::vector<Pattern> group_patterns(const topology::DeviceSpeed& speed, const workload::ParallelLayout& l,
                                    int lockstep, report::StragglerOutcome& o) {
  int groups = (l.dp + lockstep - 1) / lockstep;
  std::vector<Pattern> out(static_cast<size_t>(groups), Pattern(static_cast<size_t>(l.pp), 1.0));
  for (int r = 0; r < l.dp; ++r) {
    bool slow = false;
    for (int s = 0; s < l.pp; ++s)
      for (int c = 0; c < l.cp; ++c)
        for (int t = 0; t < l.tp; ++t) {
          double f = speed.of(l.device(t, c, r, s));
          if (f >= 1) continue;
          slow = true;
          o.slow_devices++;
          double& g = out[static_cast<size_t>(r / lockstep)][static_cast<size_t>(s)];
          g = std::min(g, f);
        }
    o.slow_replicas += slow;
  }
  return out;
}

bool slower_everywhere(const Pattern& b, const Pattern& a) {  // b <= a on every stage, and b != a
  bool differs = false;
  for (size_t s = 0; s < a.size(); ++s) {
    if (b[s] > a[s]) return false;
    differs |= b[s] < a[s];
  }
  return differs;
}

double stage_time_sum(const Pattern& p) {
  double sum = 0;
  for (double f : p) sum += 1 / f;
  return sum;
}

}  // namespace

void require_replica_layout(const topology::Topology& topo, const workload::StepPlan& plan) {
  if (topo.device_speed.nominal() || plan.rank_layout.tp > 0) return;
  throw InputError(fmt::format(
      "{}: slowdown / straggler: the {} workload kind does not tell its replicas apart, so podsim cannot "
      "place slow devices in it; per-device speeds work with transformer_lm workloads",
      topo.source_file, plan.workload_kind));
}

std::optional<StragglerReplay> replay_stragglers(const topology::Topology& topo,
                                                 const workload::StepPlan& plan,
                                                 const engine::ReplayResult& balanced) {
  if (topo.device_speed.nominal()) return std::nullopt;
  require_replica_layout(topo, plan);
  const workload::ParallelLayout& l = plan.rank_layout;
  if (plan.graph.stages != l.pp)
    throw std::logic_error(fmt::format("replay_stragglers: {} lanes for pp {}", plan.graph.stages, l.pp));
  StragglerReplay out;
  report::StragglerOutcome& o = out.outcome;
  o.replicas = l.dp;
  o.lockstep_replicas = std::max(1, std::min(plan.lockstep_replicas, l.dp));
  o.entries = topo.device_speed.entries;
  o.balanced_step = o.step = balanced.makespan;
  auto groups = group_patterns(topo.device_speed, l, o.lockstep_replicas, o);
  // Distinct patterns with the first group that has each; drop those another is slower than everywhere.
  std::map<Pattern, int> first;
  for (size_t g = 0; g < groups.size(); ++g) first.emplace(groups[g], static_cast<int>(g));
  std::vector<std::pair<Pattern, int>> undominated;
  for (const auto& entry : first) {
    const Pattern& p = entry.first;
    const int g = entry.second;
    bool dominated =
        std::any_of(first.begin(), first.end(), [&](const auto& q) { return slower_everywhere(q.first, p); });
    if (!dominated && stage_time_sum(p) > static_cast<double>(p.size())) undominated.emplace_back(p, g);
  }
  std::stable_sort(undominated.begin(), undominated.end(), [](const auto& a, const auto& b) {
    return stage_time_sum(a.first) > stage_time_sum(b.first);
  });
  if (static_cast<int>(undominated.size()) > kMaxStragglerPatterns) {
    o.patterns_skipped = static_cast<int>(undominated.size()) - kMaxStragglerPatterns;
    undominated.resize(kMaxStragglerPatterns);
  }
  out.replay = balanced;
  out.graph = plan.graph;
  for (const auto& [pattern, group] : undominated) {
    plan::TaskGraph slowed = plan.graph;
    plan::slow_lanes(slowed, pattern);
    engine::ReplayResult r = engine::replay(topo, slowed);
    o.patterns_simulated++;
    if (o.gating_replica < 0 || r.makespan > o.step) {
      o.step = r.makespan;
      o.gating_replica = group * o.lockstep_replicas;
      o.gating_stage_speed = pattern;
      out.replay = std::move(r);
      out.graph = std::move(slowed);
    }
  }
  return out;
}

std::string straggler_note(const report::StragglerOutcome& o) {
  if (o.slow_devices == 0)
    return fmt::format("stragglers: the slow devices ({}) are outside this job; step as balanced",
                       fmt::join(o.entries, "; "));
  std::string stages;
  for (size_t s = 0; s < o.gating_stage_speed.size(); ++s)
    if (o.gating_stage_speed[s] < 1)
      stages += fmt::format("{}stage {} at {:.3g}x", stages.empty() ? "" : ", ", s, o.gating_stage_speed[s]);
  std::string note = fmt::format(
      "stragglers: {} slow devices in {} of {} data-parallel replicas; step {:.4g} s against {:.4g} s "
      "balanced "
      "({:+.1f}%), gated by replica {} ({}); {} replica speed patterns replayed, the other replicas stay "
      "folded; "
      "their traffic runs in lockstep with the gating replica's (contention, if anything, overstated)",
      o.slow_devices, o.slow_replicas, o.replicas, o.step, o.balanced_step, 100 * o.loss(), o.gating_replica,
      stages, o.patterns_simulated);
  if (o.lockstep_replicas > 1)
    note += fmt::format("; expert parallelism makes {} replicas move in lockstep", o.lockstep_replicas);
  if (o.patterns_skipped > 0)
    note += fmt::format("; {} further patterns not replayed (budget {}): the step is a lower bound",
                        o.patterns_skipped, kMaxStragglerPatterns);
  return note;
}

}  // namespace podsim::driver
