// Wall time to simulate one training step (Google Benchmark). Run: build/bench/podsim_bench
// or bench/run.sh, which also reports peak memory and compares against the targets in README.md.
#include <benchmark/benchmark.h>

#include "podsim/driver/simulation.hpp"
#include "podsim/engine/replay.hpp"
#include "podsim/topology/loader.hpp"
#include "podsim/workload/transformer/megatron_builder.hpp"
#include "podsim/workload/transformer/transformer_loader.hpp"

using namespace podsim;

namespace {

std::string path(const std::string& rel) {
  return std::string(PODSIM_SOURCE_DIR) + "/" + rel;
}

struct Case {
  topology::Topology topo;
  workload::WorkloadConfig work;
};

// GPT-3 175B on 1024 A100s (the default workload) and the 1T row of Megatron SC21 Table 1 on 3072.
Case gpt3_1024() {
  auto topo = topology::load_topology(path("topologies/dgx-a100-superpod.yaml"));
  auto w =
      workload::load_workload(path("workloads/gpt3-175b.yaml"), {{"parallel.virtual_stages", "4"}}, topo);
  return {topo, w};
}

Case one_trillion_3072() {
  auto topo = topology::load_topology(path("topologies/dgx-a100-superpod.yaml"), {{"nodes", "384"}});
  auto w = workload::load_workload(path("workloads/gpt3-175b.yaml"),
                                   {{"model.layers", "128"},
                                    {"model.hidden", "25600"},
                                    {"model.heads", "160"},
                                    {"model.ffn_hidden", "102400"},
                                    {"parallel.pp", "64"},
                                    {"parallel.schedule", "1f1b"},
                                    {"parallel.virtual_stages", "1"},
                                    {"training.global_batch", "3072"}},
                                   topo);
  return {topo, w};
}

void simulate_step(benchmark::State& state, Case (*make)()) {
  // Replays run in a forked child (one SimGrid engine per process), so only wall time is meaningful here.
  Case c = make();
  double tasks = 0, makespan = 0;
  for (auto _ : state) {
    auto step = workload::build_megatron_step(c.topo, c.work, c.work.training.micro_batch,
                                              c.work.parallel.virtual_stages);
    auto replay = engine::replay(c.topo, step.graph);
    benchmark::DoNotOptimize(replay.tasks.data());  // not the double itself: 1.7.1 clobbers it
    tasks = static_cast<double>(step.graph.tasks.size());
    makespan = replay.makespan;
  }
  state.counters["tasks"] = tasks;
  state.counters["simulated_step_s"] = makespan;
}

void build_graph_only(benchmark::State& state, Case (*make)()) {
  Case c = make();
  for (auto _ : state) {
    auto step = workload::build_megatron_step(c.topo, c.work, c.work.training.micro_batch,
                                              c.work.parallel.virtual_stages);
    benchmark::DoNotOptimize(step.graph.tasks.data());
  }
}

}  // namespace

BENCHMARK_CAPTURE(simulate_step, gpt3_175b_1024_gpus, gpt3_1024)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(2.0);
BENCHMARK_CAPTURE(simulate_step, megatron_1t_3072_gpus, one_trillion_3072)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(2.0);
BENCHMARK_CAPTURE(build_graph_only, megatron_1t_3072_gpus, one_trillion_3072)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
