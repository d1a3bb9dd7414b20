#pragma once

#include <string>
#include <utility>
#include <vector>

#include "podsim/network/collective.hpp"
#include "podsim/topology/loader.hpp"

namespace podsim::testing {

inline std::string source_path(const std::string& relative) {
  return std::string(PODSIM_SOURCE_DIR) + "/" + relative;
}

inline topology::Topology preset(const std::string& name, const topology::Overrides& sets = {}) {
  return topology::load_topology(source_path("topologies/" + name + ".yaml"), sets);
}

// A collective of `kind` over the device ranks `group` (in ring order), `bytes` in nccl-tests' convention.
inline network::Collective make_collective(network::CollectiveKind kind, std::vector<int> group,
                                           double bytes) {
  network::Collective c;
  c.kind = kind;
  c.group = std::move(group);
  c.bytes = bytes;
  return c;
}

}  // namespace podsim::testing
