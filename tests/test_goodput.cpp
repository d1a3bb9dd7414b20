// Goodput under failures (issue 19): the closed form against first principles and against the Monte Carlo
// over failure times, the optimal checkpoint interval, the job's component counts from a topology, the
// reliability profile's errors, and `assess_goodput` on a simulated run.
#include <gtest/gtest.h>

#include <cmath>

#include "podsim/core/error.hpp"
#include "podsim/driver/goodput_assessment.hpp"
#include "podsim/driver/simulation.hpp"
#include "podsim/reliability/goodput.hpp"
#include "podsim/reliability/reliability_profile.hpp"
#include "study_test_helpers.hpp"
#include "test_helpers.hpp"

namespace podsim {
namespace {

using podsim::testing::source_path;
using reliability::CheckpointedJob;
using study::test_support::temp_dir;
using study::test_support::write;

TEST(Goodput, NoFailuresLosesOnlyTheCheckpoints) {
  CheckpointedJob job{0, 10, 30, 600};
  auto g = reliability::goodput_at(job, 100);
  EXPECT_DOUBLE_EQ(g.interval_seconds, 1000);
  EXPECT_NEAR(g.fraction, 1000.0 / 1030.0, 1e-12);
  EXPECT_DOUBLE_EQ(reliability::expected_wall_seconds(500, 0, 600), 500);
}

TEST(Goodput, ExpectedWallMatchesItsFirstOrderExpansion) {
  // For lambda w << 1: E[T] = w + lambda w (w/2 + R) + O(lambda^2): half a segment lost per failure on
  // average, plus the restart.
  double w = 600, R = 300, lambda = 1e-7;
  double exact = reliability::expected_wall_seconds(w, lambda, R);
  EXPECT_NEAR(exact, w + lambda * w * (w / 2 + R), 1e-6);
  // And it grows without bound as failures become frequent against the segment.
  EXPECT_GT(reliability::expected_wall_seconds(w, 1.0 / 60, R), 1e6);
}

TEST(Goodput, MonteCarloAgreesWithTheClosedForm) {
  // One failure every 3 hours (Meta's 16k-GPU rate), 10 s steps, a 60 s checkpoint, a 10 min restart.
  CheckpointedJob job{1.0 / (3 * 3600), 10, 60, 600};
  for (long long interval : {30LL, 200LL, 1000LL}) {
    auto closed = reliability::goodput_at(job, interval);
    auto mc = reliability::simulate_goodput(job, interval, 3e6, 7, 400);
    EXPECT_GT(mc.failures_per_trial, 100);
    EXPECT_NEAR(mc.fraction, closed.fraction, 4 * mc.standard_error + 1e-3) << interval << " steps";
  }
}

TEST(Goodput, MonteCarloIsReproducibleWithItsSeed) {
  CheckpointedJob job{1.0 / 3600, 5, 20, 300};
  auto a = reliability::simulate_goodput(job, 100, 1e5, 42, 20);
  auto b = reliability::simulate_goodput(job, 100, 1e5, 42, 20);
  auto c = reliability::simulate_goodput(job, 100, 1e5, 43, 20);
  EXPECT_EQ(a.fraction, b.fraction);
  EXPECT_NE(a.fraction, c.fraction);
}

TEST(Goodput, OptimumBeatsEveryOtherIntervalAndIsNearYoungDaly) {
  CheckpointedJob job{1.0 / (3 * 3600), 10, 60, 600};
  auto best = reliability::optimal_goodput(job);
  for (long long k : {best.interval_steps - 1, best.interval_steps + 1, best.interval_steps * 2,
                      best.interval_steps / 2, 1LL, 100000LL})
    EXPECT_GE(best.fraction, reliability::goodput_at(job, k).fraction) << k;
  // Young: sqrt(2 delta M) = sqrt(2 * 60 * 10800) = 1138 s; the exact optimum is within a few percent.
  double young = reliability::young_daly_interval_seconds(job);
  EXPECT_NEAR(young, std::sqrt(2 * 60.0 * 10800), 1e-9);
  EXPECT_NEAR(best.interval_seconds / young, 1.0, 0.1);
  // A lower bound on the interval (an asynchronous write still running) is respected.
  EXPECT_GE(reliability::optimal_goodput(job, 5000).interval_steps, 5000);
}

TEST(Goodput, MoreFailuresNeverRaiseGoodput) {
  double previous = 1;
  for (double mtbf_h : {100.0, 30.0, 10.0, 3.0, 1.0, 0.3}) {
    CheckpointedJob job{1 / (mtbf_h * 3600), 10, 60, 600};
    double f = reliability::optimal_goodput(job).fraction;
    EXPECT_LT(f, previous) << mtbf_h;
    previous = f;
  }
}

TEST(Goodput, BadJobFiguresAreInputErrors) {
  EXPECT_THROW(reliability::goodput_at({-1, 10, 0, 0}, 10), InputError);
  EXPECT_THROW(reliability::goodput_at({0, 0, 0, 0}, 10), InputError);
  EXPECT_THROW(reliability::goodput_at({0, 10, NAN, 0}, 10), InputError);
}

TEST(Goodput, JobUnitsFollowTheTopology) {
  auto topo = testing::preset("dgx-a100-superpod", {{"nodes", "8"}});
  auto units = driver::job_component_units(topo, 32);  // half the machine
  auto get = [&](reliability::FailureUnit u) {
    for (auto [unit, n] : units)
      if (unit == u) return n;
    return -1.0;
  };
  EXPECT_EQ(get(reliability::FailureUnit::gpu), 32);
  EXPECT_EQ(get(reliability::FailureUnit::host), 4);
  EXPECT_GT(get(reliability::FailureUnit::link), 0);
  auto all = driver::job_component_units(topo, 64);
  EXPECT_NEAR(all[4].second, 2 * get(reliability::FailureUnit::link), 1e-9);
}

std::string profile_text(const std::string& extra_failure = "") {
  return "name: test rates\n"
         "failures:\n"
         "  gpu: {per: gpu, mtbf_hours: 50000, source: test}\n"
         "  host: {per: host, mtbf_hours: 20000, source: test}\n" +
         extra_failure +
         "checkpoint:\n"
         "  storage_write_GBps: 100\n"
         "restart_minutes: 5\n";
}

TEST(Goodput, ProfileErrorsNameTheFileAndField) {
  auto dir = temp_dir("goodput-profile");
  auto expect_error = [&](const std::string& text, const std::string& needle) {
    std::string file = write(dir, "p.yaml", text);
    try {
      reliability::load_reliability_profile(file, {});
      ADD_FAILURE() << "no error for " << needle;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("p.yaml"), std::string::npos) << e.what();
    }
  };
  expect_error(profile_text("  nic: {per: nic, mtbf_hours: 0, source: x}\n"), "mtbf_hours");
  expect_error(profile_text("  nic: {per: nic, mtbf_hours: 10}\n"), "source");
  expect_error(profile_text("  nic: {per: rack, mtbf_hours: 10, source: x}\n"), "per");
  expect_error(profile_text() + "restart_minute: 3\n", "restart_minute");
  std::string file = write(dir, "ok.yaml", profile_text());
  auto p = reliability::load_reliability_profile(file, {{"restart_minutes", "2"}});
  EXPECT_DOUBLE_EQ(p.restart_seconds, 120);
  EXPECT_THROW(reliability::load_reliability_profile(file, {{"restart_minutes", "-1"}}), InputError);
}

TEST(Goodput, AssessmentOfASimulatedRun) {
  auto dir = temp_dir("goodput-run");
  std::string file = write(dir, "p.yaml", profile_text());
  auto profile = reliability::load_reliability_profile(file, {});
  driver::RunRequest request{source_path("topologies/dgx-a100-superpod.yaml"),
                             source_path("workloads/gpt3-xl.yaml"),
                             {"topology.nodes=4", "workload.training.global_batch=64"}};
  auto run = driver::simulate(request);
  ASSERT_TRUE(run.ok()) << run.status_detail;
  auto a = driver::assess_goodput(request, run, profile);
  // 32 GPUs at 50,000 h and 4 hosts at 20,000 h.
  EXPECT_NEAR(a.failures_per_hour, 32 / 50000.0 + 4 / 20000.0, 1e-12);
  EXPECT_GT(a.checkpoint_bytes, 1.3e9 * 14);  // GPT-3 XL: 1.3B parameters x (2 + 12) bytes
  EXPECT_NEAR(a.checkpoint_write_seconds, a.checkpoint_bytes / 100e9, 1e-9);
  EXPECT_NEAR(a.restart_seconds, 300 + a.checkpoint_bytes / 100e9, 1e-9);
  EXPECT_GT(a.estimate.fraction, 0.9);
  EXPECT_LT(a.estimate.fraction, 1.0);
  EXPECT_NEAR(a.monte_carlo.fraction, a.estimate.fraction, 4 * a.monte_carlo.standard_error + 1e-3);
  EXPECT_NEAR(a.expected_train_seconds * a.estimate.fraction, a.ideal_train_seconds, 1e-6 * a.ideal_train_seconds);
}

}  // namespace
}  // namespace podsim
