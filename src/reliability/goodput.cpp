#include "podsim/reliability/goodput.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "podsim/core/error.hpp"

namespace podsim::reliability {

void check_job(const CheckpointedJob& job) {
  auto check = [](double v, const char* field, bool positive) {
    if (!std::isfinite(v) || v < 0 || (positive && v == 0))
      throw InputError(fmt::format("goodput: {} is {}; it must be a finite number {} 0", field, v,
                                   positive ? ">" : ">="));
  };
  check(job.failures_per_second, "the failure rate", false);
  check(job.step_seconds, "the step time", true);
  check(job.checkpoint_seconds, "the checkpoint time", false);
  check(job.restart_seconds, "the restart time", false);
}

double expected_wall_seconds(double work_seconds, double failures_per_second, double restart_seconds) {
  double lambda = failures_per_second;
  if (lambda <= 0) return work_seconds;
  // expm1 keeps precision when lambda w is small (a rare failure), where e^x - 1 would cancel.
  return (1 / lambda + restart_seconds) * std::expm1(lambda * work_seconds);
}

GoodputEstimate goodput_at(const CheckpointedJob& job, long long interval_steps) {
  check_job(job);
  GoodputEstimate g;
  g.interval_steps = std::max<long long>(1, interval_steps);
  g.interval_seconds = static_cast<double>(g.interval_steps) * job.step_seconds;
  double wall = expected_wall_seconds(g.interval_seconds + job.checkpoint_seconds, job.failures_per_second,
                                      job.restart_seconds);
  g.fraction = std::isfinite(wall) && wall > 0 ? g.interval_seconds / wall : 0;
  return g;
}

double young_daly_interval_seconds(const CheckpointedJob& job) {
  if (job.failures_per_second <= 0) return std::numeric_limits<double>::infinity();
  return std::sqrt(2 * job.checkpoint_seconds / job.failures_per_second);
}

GoodputEstimate optimal_goodput(const CheckpointedJob& job, long long min_interval_steps) {
  check_job(job);
  long long lo = std::max<long long>(1, min_interval_steps);
  if (job.failures_per_second <= 0) return goodput_at(job, std::max(lo, 1LL << 40));  // never fails
  // The goodput is unimodal in the interval (the waste is delta/tau plus a convex term in tau): search a
  // geometric grid around Young's optimum, then every integer next to the best grid point.
  double young = young_daly_interval_seconds(job) / job.step_seconds;
  double cap = std::max(20.0 / (job.failures_per_second * job.step_seconds), 2.0 * lo);  // 20 MTBFs
  GoodputEstimate best = goodput_at(job, lo);
  for (double k = std::max<double>(lo, young / 64); k <= std::min(cap, young * 64 + lo); k *= 1.05) {
    auto g = goodput_at(job, static_cast<long long>(std::llround(k)));
    if (g.fraction > best.fraction && g.interval_steps >= lo) best = g;
  }
  long long center = best.interval_steps, step = std::max<long long>(1, center / 20);
  for (long long k = std::max(lo, center - step); k <= center + step; ++k) {
    auto g = goodput_at(job, k);
    if (g.fraction > best.fraction) best = g;
  }
  return best;
}

namespace {

// One training run of `work` seconds of steps: segments of `interval` computation + a checkpoint, each
// retried from its start after a failure (and the restart) until it completes.
struct RunOutcome {
  double wall = 0;
  long long failures = 0;
};

RunOutcome replay_run(const CheckpointedJob& job, double interval, double work, std::mt19937_64& rng) {
  std::exponential_distribution<double> next_failure(job.failures_per_second);
  RunOutcome out;
  double done = 0;
  double until_failure = job.failures_per_second > 0 ? next_failure(rng) : INFINITY;
  while (done < work) {
    double useful = std::min(interval, work - done);
    double need = useful + job.checkpoint_seconds;  // the final checkpoint is written too
    if (until_failure >= need) {
      out.wall += need;
      until_failure -= need;
      done += useful;
      continue;
    }
    out.wall += until_failure + job.restart_seconds;  // the segment's work is lost
    ++out.failures;
    until_failure = next_failure(rng);  // memoryless: a fresh draw after the restart
  }
  return out;
}

}  // namespace

MonteCarloGoodput simulate_goodput(const CheckpointedJob& job, long long interval_steps, double work_seconds,
                                   std::uint64_t seed, int trials) {
  check_job(job);
  if (!(work_seconds > 0) || trials < 1)
    throw InputError("goodput Monte Carlo: the work must be > 0 seconds and trials >= 1");
  double interval = static_cast<double>(std::max<long long>(1, interval_steps)) * job.step_seconds;
  std::mt19937_64 rng(seed);
  std::vector<double> fractions;
  double wall = 0, failures = 0;
  for (int t = 0; t < trials; ++t) {
    RunOutcome run = replay_run(job, interval, work_seconds, rng);
    wall += run.wall;
    failures += static_cast<double>(run.failures);
    fractions.push_back(work_seconds / run.wall);
  }
  MonteCarloGoodput mc;
  mc.trials = trials;
  mc.fraction = work_seconds * trials / wall;
  mc.failures_per_trial = failures / trials;
  double mean = 0, var = 0;
  for (double f : fractions) mean += f / trials;
  for (double f : fractions) var += (f - mean) * (f - mean) / std::max(1, trials - 1);
  mc.standard_error = std::sqrt(var / trials);
  return mc;
}

}  // namespace podsim::reliability
