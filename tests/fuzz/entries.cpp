#include "entries.hpp"

#include "podsim/core/csv_table.hpp"
#include "podsim/core/error.hpp"
#include "podsim/engine/replay.hpp"
#include "podsim/fit/kernel_measurements.hpp"
#include "podsim/fit/nccl_tests_log.hpp"
#include "podsim/study/study.hpp"
#include "podsim/topology/describe.hpp"
#include "podsim/topology/graph.hpp"
#include "podsim/topology/loader.hpp"
#include "podsim/workload/workload_model.hpp"

namespace podsim::fuzz {
namespace {

const std::string kRoot = PODSIM_SOURCE_DIR;

template <class F>
void rejecting_cleanly(F&& f) {
  try {
    f();
  } catch (const InputError&) {
  } catch (const InfeasibleConfig&) {
  }
}

}  // namespace

void topology_yaml(const std::string& text) {
  rejecting_cleanly([&] {
    auto topo = topology::load_topology_text(text, "fuzz.yaml", kRoot + "/topologies");
    topology::validate(topo);
    if (topo.device_count() <= 4096) topology::describe(topo);
  });
}

void workload_yaml(const std::string& text) {
  // The same workload text on each machine family, chosen by the input's length.
  static const topology::Topology machines[] = {
      topology::load_topology(kRoot + "/topologies/dgx-a100-superpod.yaml", {{"nodes", "4"}}),
      topology::load_topology(kRoot + "/topologies/tpu-v3-pod.yaml", {{"dims", "[4, 4]"}}),
      topology::load_topology(kRoot + "/topologies/cerebras-cs2-cluster.yaml", {{"systems", "2"}}),
  };
  const topology::Topology& topo = machines[text.size() % 3];
  rejecting_cleanly([&] {
    auto model = workload::load_workload_model_text(text, "fuzz.yaml", {}, topo);
    auto candidates = model->candidates();
    for (size_t i = 0; i < candidates.size() && i < 2; ++i) {
      try {
        auto plan = model->build(i);
        plan.graph.topological_order();
        if (plan.graph.tasks.size() <= 3000) engine::replay(topo, plan.graph);
      } catch (const InfeasibleConfig&) {
        model->describe_infeasible(i);
      }
    }
  });
}

void study_yaml(const std::string& text) {
  rejecting_cleanly([&] { study::load_study_text(text, "fuzz.yaml", kRoot + "/workloads/studies"); });
}

void csv_text(const std::string& text) {
  rejecting_cleanly([&] {
    auto t = parse_csv(text, "fuzz.csv");
    for (size_t r = 0; r < t.rows.size(); ++r)
      for (const auto& c : t.columns) {
        try {
          t.number(r, c);
        } catch (const InputError&) {
        }
      }
  });
}

void nccl_tests_log(const std::string& text) {
  rejecting_cleanly([&] {
    if (calibration::is_calib_nccl_csv(text))
      calibration::parse_calib_nccl_csv(text, "fuzz.csv");
    else
      calibration::parse_nccl_tests_log(text, "all_reduce_perf.fuzz.log");
  });
}

void kernel_csv(const std::string& text) {
  rejecting_cleanly([&] { calibration::parse_gemm_measurements(text, "fuzz-gemm.csv"); });
  rejecting_cleanly([&] { calibration::parse_memory_measurements(text, "fuzz-memory.csv"); });
}

}  // namespace podsim::fuzz
