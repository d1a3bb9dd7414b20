// Metamorphic tests: relations between two runs that must hold whatever the exact numbers are. More
// bandwidth is never slower; a larger batch at a fixed micro-batch never takes a shorter step; more
// data-parallel replicas at fixed work per replica leave per-device compute unchanged; a higher ZeRO stage
// never needs more memory; more recomputation never needs more memory; `auto` is never slower than a
// setting it could have chosen. Each over several configurations and workload kinds.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "known_defects.hpp"
#include "podsim/cli/simulation.hpp"
#include "podsim/core/error.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using podsim::testing::source_path;

namespace {

using Sets = std::vector<std::string>;

struct Config {
  std::string topology, workload;
  Sets sets;
  Config with(Sets more) const {
    Config c = *this;
    c.sets.insert(c.sets.end(), more.begin(), more.end());
    return c;
  }
  std::string repro() const {
    std::string s = fmt::format("podsim run --topology {} --workload {}", topology, workload);
    for (const auto& k : sets) s += " --set '" + k + "'";
    return s;
  }
};

report::RunResult run(const Config& c) {
  return cli::simulate({source_path(c.topology), source_path(c.workload), c.sets});
}

// Records a broken relation: a failure unless tests/known_defects.hpp lists it.
void expect_relation(const std::string& relation, bool holds, const Config& a, const Config& b,
                     const std::string& detail) {
  if (holds) return;
  std::string text = fmt::format("relation {}: {}", relation, detail);
  std::string repros = a.repro() + "\n" + b.repro();
  std::string defect = podsim::testing::known_defect(repros, text);
  if (!defect.empty()) {
    fmt::print("[known defect: {}] {}\n  {}\n  {}\n", defect, text, a.repro(), b.repro());
    return;
  }
  ADD_FAILURE() << text << "\n  a: " << a.repro() << "\n  b: " << b.repro();
}

bool at_most(double a, double b) {
  return a <= b * (1 + 1e-9) + 1e-15;
}

const Config kMegatron{
    "topologies/dgx-a100-superpod.yaml",
    "workloads/gpt2-small.yaml",
    {"topology.nodes=2", "workload.model.layers=8", "workload.model.heads=16", "workload.model.hidden=1024",
     "workload.model.ffn_hidden=4096", "workload.model.vocab=51200", "workload.model.seq_len=512",
     "workload.training.micro_batch=2", "workload.parallel.virtual_stages=1"}};
const Config kGShard{"topologies/tpu-v3-pod.yaml",
                     "workloads/gshard-moe.yaml",
                     {"topology.dims=[4,4]", "workload.model.experts=32", "workload.model.layers=4",
                      "workload.training.batch_tokens=65536"}};
const Config kWafer{"topologies/cerebras-cs2-cluster.yaml",
                    "workloads/gpt3-xl.yaml",
                    {"topology.systems=2", "workload.training.global_batch=32"}};
const Config kCpuPs{"topologies/cpu-mpi-cluster.yaml",
                    "workloads/ctr-sparse-ps.yaml",
                    {"topology.nodes=8", "workload.model.embedding.features=1e10"}};
const Config kGpuPs{"topologies/gpu-ps-4node.yaml", "workloads/ctr-sparse-ps.yaml", {"topology.nodes=2"}};

}  // namespace

TEST(Metamorphic, DoublingALinkClassBandwidthIsNeverSlower) {
  struct Case {
    Config base;
    std::string key;
    double value;
  };
  std::vector<Case> cases = {
      {kMegatron.with(
           {"workload.parallel.tp=4", "workload.parallel.pp=2", "workload.training.global_batch=32"}),
       "topology.node.scale_up.bandwidth_GBps", 300},
      {kMegatron.with({"workload.parallel.tp=2", "workload.training.global_batch=32"}),
       "topology.node.nic_bandwidth_Gbps", 200},
      {kMegatron.with(
           {"workload.parallel.tp=8", "workload.parallel.pp=2", "workload.training.global_batch=16"}),
       "topology.node.pcie_bandwidth_GBps", 25},
      {kGShard, "topology.ici.bandwidth_GBps", 100},
      {kWafer, "topology.swarmx.link_bandwidth_Gbps", 1200},
      {kWafer, "topology.memoryx.bandwidth_Gbps", 1200},
      {kCpuPs, "topology.node.nic_bandwidth_Gbps", 25},
      {kGpuPs, "topology.node.nic_bandwidth_Gbps", 100},
  };
  for (const auto& c : cases) {
    Config faster = c.base.with({fmt::format("{}={:g}", c.key, 2 * c.value)});
    auto a = run(c.base), b = run(faster);
    ASSERT_TRUE(a.ok() && b.ok()) << c.base.repro() << ": " << a.status_detail << b.status_detail;
    expect_relation(
        "bandwidth_not_slower", at_most(b.step_time(), a.step_time()), c.base, faster,
        fmt::format("{} doubled: step {:.9g} s -> {:.9g} s", c.key, a.step_time(), b.step_time()));
  }
}

TEST(Metamorphic, DoublingTheBatchAtAFixedMicroBatchNeverShortensTheStep) {
  struct Case {
    Config base;
    std::string key;
    long long value;
  };
  std::vector<Case> cases = {
      {kMegatron.with(
           {"workload.parallel.tp=2", "workload.parallel.pp=2", "workload.parallel.schedule=1f1b"}),
       "workload.training.global_batch", 32},
      {kMegatron.with(
           {"workload.parallel.tp=4", "workload.parallel.pp=2", "workload.parallel.schedule=gpipe"}),
       "workload.training.global_batch", 16},
      {kMegatron.with({"workload.parallel.tp=1", "workload.training.recompute=full"}),
       "workload.training.global_batch", 64},
      {kWafer.with({"workload.training.micro_batch=4"}), "workload.training.global_batch", 32},
      {kGShard, "workload.training.batch_tokens", 65536},
      {kCpuPs, "workload.training.batch_per_cpu_node", 2048},
      {kGpuPs.with({"workload.training.minibatches_per_batch=1"}), "workload.training.batch_per_gpu", 2048},
  };
  for (const auto& c : cases) {
    Config small = c.base.with({fmt::format("{}={}", c.key, c.value)});
    Config large = c.base.with({fmt::format("{}={}", c.key, 2 * c.value)});
    auto a = run(small), b = run(large);
    ASSERT_TRUE(a.ok() && b.ok()) << small.repro() << ": " << a.status_detail << b.status_detail;
    expect_relation(
        "batch_not_shorter", at_most(a.step_time(), b.step_time()), small, large,
        fmt::format("{} doubled: step {:.9g} s -> {:.9g} s", c.key, a.step_time(), b.step_time()));
  }
}

TEST(Metamorphic, MoreDataParallelReplicasAtFixedWorkLeavePerDeviceComputeUnchanged) {
  struct Case {
    Config base;
    std::string dp_key, batch_key;
    int per_replica;
  };
  std::vector<Case> cases = {
      {kMegatron.with({"topology.nodes=4", "workload.parallel.tp=4", "workload.parallel.pp=2"}),
       "workload.parallel.dp", "workload.training.global_batch", 8},
      {kMegatron.with(
           {"topology.nodes=4", "workload.parallel.tp=8", "workload.training.recompute=selective"}),
       "workload.parallel.dp", "workload.training.global_batch", 4},
      {kWafer.with({"workload.training.micro_batch=4"}), "topology.systems", "workload.training.global_batch",
       16},
  };
  using workload::Category;
  for (const auto& c : cases) {
    Config base = c.base.with({c.dp_key + "=1", fmt::format("{}={}", c.batch_key, c.per_replica)});
    auto a = run(base);
    ASSERT_TRUE(a.ok()) << base.repro() << ": " << a.status_detail;
    for (int dp : {2, 4}) {
      Config more = c.base.with(
          {fmt::format("{}={}", c.dp_key, dp), fmt::format("{}={}", c.batch_key, dp * c.per_replica)});
      auto b = run(more);
      ASSERT_TRUE(b.ok()) << more.repro() << ": " << b.status_detail;
      double fa = a.plan.hardware_flops / a.devices(), fb = b.plan.hardware_flops / b.devices();
      expect_relation("dp_compute_unchanged", std::abs(fa - fb) <= 1e-9 * fa, base, more,
                      fmt::format("executed FLOPs per device {:.9g} -> {:.9g}", fa, fb));
      double ca = a.mean[Category::compute], cb = b.mean[Category::compute];
      expect_relation("dp_compute_unchanged", std::abs(ca - cb) <= 1e-9 * ca, base, more,
                      fmt::format("compute seconds per device {:.9g} -> {:.9g}", ca, cb));
    }
  }
}

TEST(Metamorphic, AHigherZeroStageNeverNeedsMoreMemory) {
  std::vector<Config> cases = {
      kMegatron.with(
          {"workload.parallel.tp=8", "workload.parallel.dp=1", "workload.training.global_batch=8"}),
      kMegatron.with(
          {"workload.parallel.tp=4", "workload.parallel.dp=2", "workload.training.global_batch=8"}),
      kMegatron.with(
          {"workload.parallel.tp=1", "workload.parallel.dp=16", "workload.training.global_batch=32"}),
      kMegatron.with({"workload.model.layers=24", "workload.model.hidden=2048", "workload.model.heads=16",
                      "workload.model.ffn_hidden=8192", "workload.parallel.tp=2", "workload.parallel.dp=4",
                      "workload.training.global_batch=16"}),
  };
  for (const auto& base : cases) {
    double previous = 0;
    Config previous_config;
    for (int zero = 0; zero <= 3; ++zero) {
      Config c = base.with({fmt::format("workload.parallel.zero={}", zero)});
      auto r = run(c);  // out_of_memory results still describe their memory
      double memory = r.memory_per_device();
      if (zero > 0)
        expect_relation("zero_memory", at_most(memory, previous), previous_config, c,
                        fmt::format("ZeRO {} -> {}: memory per device {:.4f} -> {:.4f} GiB", zero - 1, zero,
                                    previous / (1 << 30), memory / (1 << 30)));
      previous = memory;
      previous_config = c;
    }
  }
}

TEST(Metamorphic, MoreRecomputationNeverNeedsMoreMemory) {
  std::vector<Config> cases = {
      kMegatron.with(
          {"workload.parallel.tp=2", "workload.parallel.pp=2", "workload.training.global_batch=32"}),
      kMegatron.with({"workload.parallel.tp=4", "workload.parallel.sequence_parallel=true",
                      "workload.training.global_batch=16"}),
      kMegatron.with({"workload.parallel.pp=4", "workload.parallel.schedule=gpipe",
                      "workload.training.global_batch=64"}),
      kMegatron.with({"workload.parallel.pp=2", "workload.parallel.schedule=interleaved",
                      "workload.parallel.virtual_stages=2", "workload.training.global_batch=32"}),
  };
  for (const auto& base : cases) {
    Config none = base.with({"workload.training.recompute=none"});
    Config selective = base.with({"workload.training.recompute=selective"});
    Config full = base.with({"workload.training.recompute=full"});
    double mn = run(none).memory_per_device(), ms = run(selective).memory_per_device();
    double mf = run(full).memory_per_device();
    expect_relation("recompute_memory", at_most(ms, mn), none, selective,
                    fmt::format("selective {:.4f} GiB > none {:.4f} GiB", ms / (1 << 30), mn / (1 << 30)));
    expect_relation("recompute_memory", at_most(mf, ms), selective, full,
                    fmt::format("full {:.4f} GiB > selective {:.4f} GiB", mf / (1 << 30), ms / (1 << 30)));
  }
}

TEST(Metamorphic, AutoIsNeverSlowerThanASettingItCouldHaveChosen) {
  struct Case {
    Config base;
    std::string key;
    std::vector<std::string> explicit_values;
  };
  std::vector<Case> cases = {
      {kMegatron.with(
           {"workload.parallel.tp=2", "workload.parallel.pp=2", "workload.training.global_batch=32"}),
       "workload.training.micro_batch",
       {"1", "2", "4"}},
      {kMegatron.with({"workload.parallel.tp=2", "workload.parallel.pp=2",
                       "workload.parallel.schedule=interleaved", "workload.training.global_batch=32"}),
       "workload.parallel.virtual_stages",
       {"1", "2"}},
      {kWafer, "workload.training.execution_mode", {"layer_pipelined", "weight_streaming"}},
      {Config{"topologies/cerebras-cs2-cluster.yaml",
              "workloads/gpt2-small.yaml",
              {"topology.systems=1", "workload.training.global_batch=64"}},
       "workload.training.execution_mode",
       {"layer_pipelined", "weight_streaming"}},
      {Config{"topologies/cerebras-cs2-cluster.yaml",
              "workloads/gpt2-small.yaml",
              {"topology.systems=1", "workload.training.global_batch=8"}},
       "workload.training.execution_mode",
       {"layer_pipelined", "weight_streaming"}},
      {Config{"topologies/cerebras-cs2-cluster.yaml",
              "workloads/gpt2-small.yaml",
              {"topology.systems=4", "workload.training.global_batch=64", "workload.model.layers=4"}},
       "workload.training.execution_mode",
       {"layer_pipelined", "weight_streaming"}},
  };
  for (const auto& c : cases) {
    Config automatic = c.base.with({c.key + "=auto"});
    auto a = run(automatic);
    for (const auto& v : c.explicit_values) {
      Config chosen = c.base.with({c.key + "=" + v});
      report::RunResult b;
      try {
        b = run(chosen);
      } catch (const InputError&) {
        continue;  // not a setting auto could have chosen here
      }
      if (!b.ok()) continue;
      ASSERT_TRUE(a.ok()) << automatic.repro() << " is " << a.status << " but " << chosen.repro() << " fits";
      double pa = a.step_time() / a.plan.samples_per_step, pb = b.step_time() / b.plan.samples_per_step;
      expect_relation("auto_not_slower", at_most(pa, pb), automatic, chosen,
                      fmt::format("auto ({}) takes {:.9g} s per sample, {}={} takes {:.9g}",
                                  a.setting(c.key.substr(c.key.rfind('.') + 1)), pa, c.key, v, pb));
    }
  }
}
