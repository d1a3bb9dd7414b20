#pragma once

#include <string>
#include <utility>
#include <vector>

#include "podsim/topology/loader.hpp"

namespace podsim::testing {

inline std::string source_path(const std::string& relative) {
  return std::string(PODSIM_SOURCE_DIR) + "/" + relative;
}

inline topology::Topology preset(const std::string& name, const topology::Overrides& sets = {}) {
  return topology::load_topology(source_path("topologies/" + name + ".yaml"), sets);
}

}  // namespace podsim::testing
