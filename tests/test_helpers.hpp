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
