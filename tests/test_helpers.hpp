#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "podsim/core/error.hpp"
#include "podsim/topology/loader.hpp"

namespace podsim::testing {

inline std::string source_path(const std::string& relative) {
  return std::string(PODSIM_SOURCE_DIR) + "/" + relative;
}

inline topology::Topology preset(const std::string& name, const topology::Overrides& sets = {}) {
  return topology::load_topology(source_path("topologies/" + name + ".yaml"), sets);
}

// workloads/qwen3-30b-a3b.yaml cut to 4 layers, expert parallelism of 64 in each of two pipeline stages (128
// ranks): on two NVL72 racks the second stage's ranks 64..127 straddle the racks (node.devices_used tests).
inline Overrides expert_groups_of_64_in_two_stages() {
  return {{"model.layers", "4"},
          {"parallel.tp", "1"},
          {"parallel.pp", "2"},
          {"parallel.dp", "64"},
          {"parallel.ep", "64"},
          {"parallel.virtual_stages", "1"},
          {"training.global_batch", "128"},
          {"training.micro_batch", "1"}};
}

// A GPU cluster preset cut to eight servers in two spine groups ("pods") of two scalable units of two
// servers, the spines' uplinks to the core tapered `core_taper`:1 ("1": non-blocking): what crosses a
// tapered core (parallel.rank_order tests).
inline topology::Overrides two_pods(const char* core_taper) {
  return {{"nodes", "8"},
          {"fabric.scalable_unit_nodes", "2"},
          {"fabric.sus_per_spine_group", "2"},
          {"fabric.core_oversubscription", core_taper}};
}

// The message of the InputError that `f` throws, or "" when it throws none (so `.empty()` means accepted).
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace podsim::testing
