// Wall time of one GPT-3 175B step on very large DGX A100 SuperPODs (issue 11: 16,384 nodes crashed,
// 8,192 took minutes). Each replay takes minutes on one core, so this is a plain program rather than a
// Google Benchmark: `build/bench/podsim_bench_scale [nodes...]` (default 8192 10240 16384).
//
// Weak scaling as in workloads/studies/gpt3-weak-scaling.yaml, but with 8 sequences per data-parallel
// replica (8 microbatches, the fewest the 8-stage pipeline takes) so that the cost shown is that of the
// platform's size, not of the number of microbatches.
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "podsim/engine/replay.hpp"
#include "podsim/topology/loader.hpp"
#include "podsim/workload/transformer/megatron_builder.hpp"
#include "podsim/workload/transformer/transformer_loader.hpp"

using namespace podsim;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes = {8192, 10240, 16384};
  const std::string root = PODSIM_SOURCE_DIR;
  fmt::print("{:>6} {:>7} {:>6} {:>7} {:>8} {:>8} {:>7} {:>9} {:>9} {:>10} {:>8} {:>8}\n", "nodes", "devices",
             "dp", "tasks", "hosts", "links", "stack", "build_s", "replay_s", "step_s", "simgrid", "closed");
  for (int nodes : sizes) {
    auto t0 = std::chrono::steady_clock::now();
    auto topo = topology::load_topology(root + "/topologies/dgx-a100-superpod.yaml",
                                        {{"nodes", std::to_string(nodes)}});
    long long dp = topo.device_count() / 64;  // tp 8 x pp 8
    auto w = workload::load_workload(
        root + "/workloads/gpt3-175b.yaml",
        {{"parallel.virtual_stages", "1"}, {"training.global_batch", std::to_string(8 * dp)}}, topo);
    auto step = workload::build_megatron_step(topo, w, 1, 1);
    double build = seconds_since(t0);
    auto t1 = std::chrono::steady_clock::now();
    auto r = engine::replay(topo, step.graph);
    fmt::print("{:>6} {:>7} {:>6} {:>7} {:>8} {:>8} {:>5.0f}Mi {:>9.2f} {:>9.2f} {:>10.6f} {:>8} {:>8}\n",
               nodes, topo.device_count(), dp, step.graph.tasks.size(), r.hosts, r.links,
               engine::simgrid_stack_bytes(r.hosts, r.links) / 1048576.0, build, seconds_since(t1),
               r.makespan, r.simgrid_activities, r.closed_form_phases);
    std::fflush(stdout);
  }
}
