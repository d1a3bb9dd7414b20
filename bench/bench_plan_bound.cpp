// Time `podsim plan` spends per candidate outside simulation: the memory model and the lower bound
// (driver::Estimator::estimate), which a search runs for every combination that divides (1.39M for
// Mixtral 8x7B on 64 H100). Run: build/bench/podsim_bench_plan_bound (or bench/run.sh).
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "podsim/driver/plan_bound.hpp"
#include "podsim/topology/loader.hpp"
#include "podsim/workload/transformer/transformer_loader.hpp"

using namespace podsim;

namespace {

std::string path(const std::string& rel) {
  return std::string(PODSIM_SOURCE_DIR) + "/" + rel;
}

// A slice of the Mixtral search's space: layouts, ZeRO stages, overlap, micro-batch and recomputation,
// every one that the workload checks accept.
std::vector<workload::WorkloadConfig> mixtral_candidates(const topology::Topology& topo) {
  std::vector<workload::WorkloadConfig> out;
  for (int tp : {1, 2, 4, 8})
    for (int pp : {1, 2, 4})
      for (int ep : {1, 2, 4, 8})
        for (int zero : {0, 1, 2, 3})
          for (const char* overlap : {"true", "false"})
            for (const char* mb : {"1", "2"})
              for (const char* recompute : {"none", "selective", "full"}) {
                try {
                  out.push_back(
                      workload::load_workload(path("workloads/mixtral-8x7b.yaml"),
                                              {{"parallel.tp", std::to_string(tp)},
                                               {"parallel.pp", std::to_string(pp)},
                                               {"parallel.dp", std::to_string(64 / (tp * pp))},
                                               {"parallel.ep", std::to_string(ep)},
                                               {"parallel.sequence_parallel", tp > 1 ? "true" : "false"},
                                               {"parallel.zero", std::to_string(zero)},
                                               {"parallel.dp_overlap", overlap},
                                               {"parallel.virtual_stages", "1"},
                                               {"training.micro_batch", mb},
                                               {"training.recompute", recompute}},
                                              topo));
                } catch (const std::exception&) {
                  // not a valid combination (the search skips it before bounding, too)
                }
              }
  return out;
}

void bound_candidates(benchmark::State& state) {
  auto topo = topology::load_topology(path("topologies/dgx-h100-superpod.yaml"), {{"nodes", "8"}});
  auto candidates = mixtral_candidates(topo);
  // One estimator for the whole search, as `podsim plan` keeps it: its caches warm up once.
  driver::Estimator estimator(topo);
  double fits = 0;
  for (auto _ : state) {
    fits = 0;
    for (const auto& w : candidates) {
      auto e = estimator.estimate(w);
      benchmark::DoNotOptimize(e.lower_bound);
      fits += e.fits ? 1 : 0;
    }
  }
  state.counters["candidates"] = static_cast<double>(candidates.size());
  state.counters["fit"] = fits;
  state.counters["candidates_per_s"] =
      benchmark::Counter(static_cast<double>(candidates.size()) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK(bound_candidates)->Unit(benchmark::kMillisecond)->MinTime(2.0);

BENCHMARK_MAIN();
