// Metamorphic tests: relations between two runs that must hold whatever the exact numbers are. More
// bandwidth is never slower; a larger batch at a fixed micro-batch never takes a shorter step; more
// data-parallel replicas at fixed work per replica leave per-device compute unchanged; a higher ZeRO stage
// never needs more memory; more recomputation never needs more memory; `auto` is never slower than a
// setting it could have chosen. Each over several configurations and workload kinds.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <optional>

#include "known_defects.hpp"
#include "podsim/core/config_node.hpp"
#include "podsim/core/error.hpp"
#include "podsim/driver/simulation.hpp"
#include "property_cases.hpp"
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
  return driver::simulate({source_path(c.topology), source_path(c.workload), c.sets});
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
  // Without dp_overlap: compute the schedule overlaps with data-parallel communication is slowed by the
  // device's overlap_compute_slowdown (more replicas, more such communication), deliberately.
  std::vector<Case> cases = {
      {kMegatron.with({"topology.nodes=4", "workload.parallel.tp=4", "workload.parallel.pp=2",
                       "workload.parallel.dp_overlap=false"}),
       "workload.parallel.dp", "workload.training.global_batch", 8},
      {kMegatron.with({"topology.nodes=4", "workload.parallel.tp=8", "workload.training.recompute=selective",
                       "workload.parallel.dp_overlap=false"}),
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

namespace {

// The value of a dotted key ("node.nic_bandwidth_Gbps") in a YAML file; NaN when absent.
double yaml_number(const std::string& file, const std::string& dotted) {
  ConfigNode node = ConfigNode::load_file(source_path(file));
  size_t begin = 0;
  for (size_t dot; (dot = dotted.find('.', begin)) != std::string::npos; begin = dot + 1) {
    auto child = node.optional_child(dotted.substr(begin, dot - begin));
    if (!child) return std::nan("");
    node = *child;
  }
  std::string leaf = dotted.substr(begin);
  return node.has(leaf) ? node.number(leaf) : std::nan("");
}

Config config_of(const podsim::testing::Case& c) {
  return {c.topology, c.workload, c.sets};
}

// A run that may be invalid input or infeasible; nullopt then.
std::optional<report::RunResult> try_run(const Config& c) {
  try {
    auto r = run(c);
    if (r.ok()) return r;
  } catch (const InputError&) {
  }
  return std::nullopt;
}

}  // namespace

// The relations above on configurations drawn by the property generator (tests/property_cases.hpp):
// PODSIM_METAMORPHIC_CASES (default 48) seeds from PODSIM_METAMORPHIC_SEED_BASE (default 1).
TEST(Metamorphic, RandomConfigurationsObeyTheRelations) {
  const char* n_env = std::getenv("PODSIM_METAMORPHIC_CASES");
  const char* base_env = std::getenv("PODSIM_METAMORPHIC_SEED_BASE");
  long cases = n_env ? std::strtol(n_env, nullptr, 10) : 48;
  long base = base_env ? std::strtol(base_env, nullptr, 10) : 1;
  int checked = 0;
  for (long i = 0; i < cases; ++i) {
    auto drawn = podsim::testing::draw_case(static_cast<std::uint64_t>(base + i));
    Config c = config_of(drawn);
    std::optional<report::RunResult> a;
    try {
      a = try_run(c);
    } catch (const InvariantViolation&) {
      continue;  // the property test reports these
    }
    if (!a) continue;
    ++checked;
    try {
      // More bandwidth on the links between servers (or chips, or systems) is never slower.
      for (const char* key :
           {"node.nic_bandwidth_Gbps", "ici.bandwidth_GBps", "swarmx.link_bandwidth_Gbps"}) {
        double v = yaml_number(c.topology, key);
        if (std::isnan(v)) continue;
        Config faster = c.with({fmt::format("topology.{}={:g}", key, 2 * v)});
        if (auto b = try_run(faster))
          expect_relation(
              "bandwidth_not_slower", at_most(b->step_time(), a->step_time()), c, faster,
              fmt::format("{} doubled: step {:.9g} s -> {:.9g} s", key, a->step_time(), b->step_time()));
      }
      if (drawn.family == "transformer_lm/gpu_cluster") {
        int zero = std::stoi(drawn.get("workload.parallel.zero"));
        if (zero < 3 && std::stoi(drawn.get("workload.parallel.pp")) == 1) {
          Config higher = c.with({fmt::format("workload.parallel.zero={}", zero + 1)});
          double m0 = a->memory_per_device(), m1 = run(higher).memory_per_device();
          expect_relation("zero_memory", at_most(m1, m0), c, higher,
                          fmt::format("ZeRO {} -> {}: memory per device {:.4f} -> {:.4f} GiB", zero, zero + 1,
                                      m0 / (1 << 30), m1 / (1 << 30)));
        }
        if (drawn.get("workload.training.micro_batch") == "auto")
          for (const char* mb : {"1", "2", "4"}) {
            Config fixed = c.with({std::string("workload.training.micro_batch=") + mb});
            if (auto b = try_run(fixed))
              expect_relation("auto_not_slower",
                              at_most(a->step_time() / a->plan.samples_per_step,
                                      b->step_time() / b->plan.samples_per_step),
                              c, fixed,
                              fmt::format("auto (micro_batch {}) step {:.9g} s, micro_batch={} step {:.9g} s",
                                          a->setting("micro_batch"), a->step_time(), mb, b->step_time()));
          }
      }
      if (drawn.family == "transformer_lm/wafer_cluster" &&
          drawn.get("workload.training.execution_mode") == "auto")
        for (const char* mode : {"layer_pipelined", "weight_streaming"}) {
          Config fixed = c.with({std::string("workload.training.execution_mode=") + mode});
          if (auto b = try_run(fixed))
            expect_relation("auto_not_slower", at_most(a->step_time(), b->step_time()), c, fixed,
                            fmt::format("auto ({}) step {:.9g} s, {} step {:.9g} s",
                                        a->setting("execution_mode"), a->step_time(), mode, b->step_time()));
        }
    } catch (const InvariantViolation&) {
      // A perturbed run broke an invariant: the property test covers those configurations too.
    }
  }
  EXPECT_GE(checked, cases / 2) << "too few drawn configurations ran";
}
