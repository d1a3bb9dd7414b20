// Engine at scale (issue 16): wall time, peak memory and phases through SimGrid of one Llama 3 70B step
// (tp 4, pp 8, interleaved v=5, dp = GPUs / 32, 8 micro-batches per replica) on DGX H100 SuperPODs of 1k,
// 3k, 16k and 100k GPUs. A plain program, not a Google Benchmark, because the large sizes take minutes:
// `build/bench/podsim_bench_gpus [gpus...]` (default 1024 3072 16384 102400; run it pinned to one core).
// Peak memory is the largest resident set of a replay child so far (sizes run in ascending order).
#include <fmt/format.h>
#include <sys/resource.h>

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

double peak_child_mib() {
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  return u.ru_maxrss / 1024.0;  // KiB on Linux
}

double peak_self_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> gpus;
  for (int i = 1; i < argc; ++i) gpus.push_back(std::atoi(argv[i]));
  if (gpus.empty()) gpus = {1024, 3072, 16384, 102400};
  const std::string root = PODSIM_SOURCE_DIR;
  fmt::print("{:>7} {:>6} {:>6} {:>7} {:>8} {:>9} {:>9} {:>9} {:>9} {:>10} {:>8} {:>8}\n", "gpus", "nodes",
             "dp", "tasks", "phases", "build_s", "replay_s", "total_s", "peak_MiB", "step_s", "simgrid",
             "closed");
  for (int n : gpus) {
    auto t0 = std::chrono::steady_clock::now();
    const int nodes = n / 8;
    auto topo = topology::load_topology(root + "/topologies/dgx-h100-superpod.yaml",
                                        {{"nodes", std::to_string(nodes)}});
    const long long dp = topo.device_count() / 32;  // tp 4 x pp 8
    auto w = workload::load_workload(
        root + "/workloads/llama3-70b.yaml",
        {{"parallel.dp", std::to_string(dp)}, {"training.global_batch", std::to_string(8 * dp)}}, topo);
    auto step = workload::build_megatron_step(topo, w, 1, 5);
    long long phases = 0;
    for (const auto& p : step.graph.plans) phases += static_cast<long long>(p.size());
    double build = seconds_since(t0);
    auto t1 = std::chrono::steady_clock::now();
    auto r = engine::replay(topo, step.graph);
    double replay = seconds_since(t1);
    fmt::print("{:>7} {:>6} {:>6} {:>7} {:>8} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.0f} {:>10.6f} {:>8} {:>8}\n",
               topo.device_count(), nodes, dp, step.graph.tasks.size(), phases, build, replay, build + replay,
               std::max(peak_child_mib(), peak_self_mib()), r.makespan, r.simgrid_activities,
               r.closed_form_phases);
    std::fflush(stdout);
  }
}
