// The invariant checks every run goes through (report/invariants.hpp): a sound hand-made result passes,
// and breaking each invariant alone is reported under that invariant's name, with the numbers.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "podsim/core/error.hpp"
#include "podsim/driver/simulation.hpp"
#include "podsim/report/invariants.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using podsim::testing::preset;
using podsim::testing::source_path;

namespace {

const topology::Topology& one_dgx() {
  static const topology::Topology topo = preset("dgx-a100-superpod", {{"nodes", "1"}});
  return topo;
}

// 8 GPUs, a 1 s step at HFU 0.5 and MFU 0.375, one lane: compute 0.5 + dp 0.25 + idle 0.25.
report::RunResult sound_result() {
  const auto& topo = one_dgx();
  report::RunResult r;
  r.topology_name = topo.name;
  r.workload_name = "hand-made";
  r.workload_kind = "transformer_lm";
  r.topology_devices = topo.compute_device_count();
  r.device_memory_capacity = topo.device.hbm_bytes;
  auto& p = r.plan;
  p.devices = 8;
  p.peak_flops = topo.device.peak(topology::Precision::fp16);
  p.hardware_flops = 0.5 * 8 * p.peak_flops;
  p.model_flops = 0.75 * p.hardware_flops;
  p.samples_per_step = 16;
  p.tokens_per_step = 16 * 1024;
  p.settings = {{"precision", "fp16"},
                {"global_batch", "16"},
                {"micro_batch", "2"},
                {"microbatches", "1"},
                {"dp", "8"}};
  p.graph.stages = 1;
  p.graph.tasks.push_back({});
  workload::MemoryBreakdown m;
  m.weights = 10.0 * (1 << 30);
  p.memory = {m};
  r.replay.makespan = 1;
  r.replay.tasks = {{0, 0.5, 1}};
  report::StageBreakdown lane;
  lane.seconds[static_cast<int>(workload::Category::compute)] = 0.5;
  lane.seconds[static_cast<int>(workload::Category::dp)] = 0.25;
  lane.idle = 0.25;
  r.stages = {lane};
  r.mean = lane;
  r.mean.stage = -1;
  return r;
}

std::string violations(const report::RunResult& r) {
  std::string s;
  for (const auto& v : report::invariant_violations(r, one_dgx())) s += v + "\n";
  return s;
}

}  // namespace

TEST(Invariants, ASoundResultPasses) {
  EXPECT_EQ(violations(sound_result()), "");
  EXPECT_NO_THROW(report::check_invariants(sound_result(), one_dgx()));
}

TEST(Invariants, HfuAboveOneIsTimeBelowTheFlopsAtPeak) {
  auto r = sound_result();
  r.plan.hardware_flops *= 3;  // HFU 1.5
  r.plan.model_flops *= 3;
  std::string v = violations(r);
  EXPECT_NE(v.find("hfu: the step takes 1 s"), std::string::npos) << v;
  EXPECT_NE(v.find("HFU 1.5000 > 1"), std::string::npos) << v;
  try {
    report::check_invariants(r, one_dgx());
    FAIL() << "no InvariantViolation";
  } catch (const InvariantViolation& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("invariant hfu"), std::string::npos) << what;
    EXPECT_NE(what.find("global_batch=16"), std::string::npos) << what;  // names the settings
  }
}

TEST(Invariants, KernelsFasterThanPeakAreReportedEvenWhenHfuLooksPlausible) {
  auto r = sound_result();  // HFU 0.5: 0.5 s of FLOPs at peak, but only 0.25 s of compute
  r.stages[0].seconds[static_cast<int>(workload::Category::compute)] = 0.25;
  r.stages[0].idle = 0.5;
  r.mean = r.stages[0];
  std::string v = violations(r);
  EXPECT_NE(v.find("compute: the devices compute for 0.25 s"), std::string::npos) << v;
  EXPECT_NE(v.find("2.0000 x peak"), std::string::npos) << v;
}

TEST(Invariants, MfuAboveHfuIsReported) {
  auto r = sound_result();
  r.plan.model_flops = 1.01 * r.plan.hardware_flops;
  EXPECT_NE(violations(r).find("flops: model FLOPs"), std::string::npos);
}

TEST(Invariants, APeakThatIsNotThePrecisionsDatasheetPeakIsReported) {
  auto r = sound_result();
  r.plan.peak_flops *= 2;  // e.g. fp8 peak used for an fp16 run: MFU looks half of what it is
  r.plan.hardware_flops *= 2;
  r.plan.model_flops *= 2;
  EXPECT_NE(violations(r).find("peak: MFU and HFU are taken against"), std::string::npos);
  r = sound_result();
  r.plan.peak_flops = 0;
  EXPECT_NE(violations(r).find("peak:"), std::string::npos);
}

TEST(Invariants, ALaneThatDoesNotAddUpIsReported) {
  auto r = sound_result();
  r.stages[0].idle = 0.3;  // 1.05 s of a 1 s step
  std::string v = violations(r);
  EXPECT_NE(v.find("breakdown: lane 0: categories + idle = 1.05"), std::string::npos) << v;
  r = sound_result();
  r.mean.idle = 0;
  EXPECT_NE(violations(r).find("breakdown: mean over lanes"), std::string::npos);
  r = sound_result();
  r.stages.clear();
  EXPECT_NE(violations(r).find("breakdown: no lane"), std::string::npos);
}

TEST(Invariants, NonFiniteOrNegativeNumbersAreReported) {
  auto r = sound_result();
  r.plan.memory[0].activations = -1;
  EXPECT_NE(violations(r).find("finite: lane 0 activations memory"), std::string::npos);
  r = sound_result();
  r.plan.tokens_per_step = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(violations(r).find("finite: tokens per step"), std::string::npos);
  r = sound_result();
  r.stages[0].seconds[static_cast<int>(workload::Category::tp)] = std::numeric_limits<double>::infinity();
  EXPECT_NE(violations(r).find("finite: lane 0 tp"), std::string::npos);
}

TEST(Invariants, MemoryOverCapacityMustNotBeOk) {
  auto r = sound_result();
  r.plan.memory[0].activations = 100.0 * (1 << 30);  // 110 GiB on an 80 GiB GPU
  EXPECT_NE(violations(r).find("memory: status ok, but lane 0 needs 110.0000 GiB"), std::string::npos);
  r.status = "out_of_memory";
  r.status_detail = "stage 0 needs 110 GiB";
  EXPECT_EQ(violations(r), "");
  r.status_detail.clear();
  EXPECT_NE(violations(r).find("status: status 'out_of_memory' without a reason"), std::string::npos);
}

TEST(Invariants, SamplesPerStepMustBeTheBatch) {
  auto r = sound_result();
  r.plan.samples_per_step = 32;  // the global batch is 16
  std::string v = violations(r);
  EXPECT_NE(v.find("batch: the step trains 32 samples, but its global_batch is 16"), std::string::npos) << v;
  r = sound_result();
  r.plan.settings[3].second = "2";  // 2 x 2 x 8 = 32 sequences
  EXPECT_NE(violations(r).find("batch: micro_batch 2 x microbatches 2 x dp 8"), std::string::npos);
}

TEST(Invariants, DevicesMustExistAndBeUsed) {
  auto r = sound_result();
  r.plan.devices = 16;  // one DGX has 8
  r.plan.hardware_flops *= 0.5;
  r.plan.model_flops *= 0.5;
  EXPECT_NE(violations(r).find("devices: the job uses 16 devices"), std::string::npos);
  r.plan.devices = 0;
  EXPECT_NE(violations(r).find("devices: the job uses 0 devices"), std::string::npos);
}

TEST(Invariants, TasksMustRunInsideTheStep) {
  auto r = sound_result();
  r.replay.tasks[0].end = 2;
  EXPECT_NE(violations(r).find("tasks: task 0"), std::string::npos);
  r = sound_result();
  r.replay.tasks.clear();
  EXPECT_NE(violations(r).find("tasks: the replay timed 0 tasks"), std::string::npos);
}

TEST(Invariants, ReportedMetricsAreTheFlopsOverStepDevicesAndPeak) {
  // RunResult computes MFU/HFU itself; the check recomputes them, so a change to one formula is caught.
  auto r = sound_result();
  EXPECT_NEAR(r.hfu(), 0.5, 1e-12);
  EXPECT_NEAR(r.mfu(), 0.375, 1e-12);
  EXPECT_EQ(violations(r).find("metrics"), std::string::npos);
}

TEST(Invariants, TheChosenCandidateIsTheFastestFeasiblePerSample) {
  std::vector<report::CandidateOutcome> c = {
      {"micro_batch=1", true, 2.0, 16}, {"micro_batch=2", true, 1.5, 16}, {"micro_batch=4", false, 0, 0}};
  EXPECT_NO_THROW(report::check_choice(c, 1));
  EXPECT_THROW(report::check_choice(c, 0), InvariantViolation);
  EXPECT_THROW(report::check_choice(c, 2), InvariantViolation);   // infeasible
  EXPECT_THROW(report::check_choice(c, -1), InvariantViolation);  // none although one fits
  // Per sample, not per step: 3 s for 32 samples beats 2 s for 16.
  c[0] = {"minibatches=2", true, 3.0, 32};
  c[1] = {"minibatches=1", true, 2.0, 16};
  EXPECT_NO_THROW(report::check_choice(c, 0));
  EXPECT_THROW(report::check_choice(c, 1), InvariantViolation);
  EXPECT_NO_THROW(report::check_choice({{"a", false}, {"b", false}}, -1));
}

TEST(Invariants, ARealRunIsSound) {
  // simulate() runs the checks itself (it would throw); they are rerun here on the returned result.
  driver::RunRequest request{
      source_path("topologies/dgx-a100-superpod.yaml"),
      source_path("workloads/gpt2-small.yaml"),
      {"topology.nodes=1", "workload.training.global_batch=16", "workload.training.micro_batch=2"}};
  auto r = driver::simulate(request);
  ASSERT_TRUE(r.ok()) << r.status_detail;
  EXPECT_EQ(report::invariant_violations(r, preset("dgx-a100-superpod", {{"nodes", "1"}})).size(), 0u);
}
