// Goodput of a checkpointed training job under random failures: the expected fraction of wall time that
// goes into steps that are kept. Closed form (exact for exponentially distributed failure times) and a
// Monte Carlo over failure times with a fixed seed; the two agree (tests/test_goodput.cpp).
//
// The job computes, blocks for `checkpoint_seconds` every `interval_steps` steps to write a checkpoint, and
// on a failure loses the work since the last complete checkpoint and is down for `restart_seconds`
// (detection, rescheduling, restoring the checkpoint, warm-up). Failures during a restart are not counted:
// the first-order model of Young (1974) and Daly (2006), which is exact to O((lambda R)^2).
#pragma once

#include <cstdint>

namespace podsim::reliability {

struct CheckpointedJob {
  double failures_per_second = 0;  // of the whole job: the sum over its components
  double step_seconds = 0;
  double checkpoint_seconds = 0;  // training blocked per checkpoint
  double restart_seconds = 0;     // down time per failure
};

struct GoodputEstimate {
  long long interval_steps = 0;  // steps between checkpoints
  double interval_seconds = 0;   // of computation between checkpoints
  double fraction = 0;           // expected useful step time / wall time, in (0, 1]
};

// Expected wall time to finish `work_seconds` that must run uninterrupted (one checkpoint interval and its
// checkpoint) when failures arrive at `failures_per_second` and each costs `restart_seconds`:
// (1/lambda + R) (e^(lambda w) - 1), and w when lambda = 0.
double expected_wall_seconds(double work_seconds, double failures_per_second, double restart_seconds);

GoodputEstimate goodput_at(const CheckpointedJob& job, long long interval_steps);
// The interval (a whole number of steps, at least `min_interval_steps`) with the highest goodput.
GoodputEstimate optimal_goodput(const CheckpointedJob& job, long long min_interval_steps = 1);
// Young's first-order optimum sqrt(2 delta / lambda), in seconds of computation (infinite when lambda = 0).
double young_daly_interval_seconds(const CheckpointedJob& job);

struct MonteCarloGoodput {
  double fraction = 0;        // useful time / wall time over all trials
  double standard_error = 0;  // of the per-trial fractions' mean
  double failures_per_trial = 0;
  int trials = 0;
};

// Draws failure times (exponential, std::mt19937_64 seeded with `seed`) for `trials` runs of
// `work_seconds` of useful computation each and replays the checkpoint/restart protocol above.
MonteCarloGoodput simulate_goodput(const CheckpointedJob& job, long long interval_steps, double work_seconds,
                                   std::uint64_t seed, int trials);

// Throws InputError naming the field when a job figure is negative, not finite, or the step time is 0.
void check_job(const CheckpointedJob& job);

}  // namespace podsim::reliability
