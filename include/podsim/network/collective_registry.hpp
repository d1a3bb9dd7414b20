// The one list of collective algorithms: each one's name (what YAML, --algorithm and outputs say), the
// collectives it plans and its planner. Adding an algorithm = its planner in its own file under
// src/network/ + one line in src/network/collective_registry.cpp (and its Algorithm value).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "podsim/network/collective.hpp"

namespace podsim::network {

using Planner = plan::CommPlan (*)(const topology::Topology& topo, const Collective& c);

struct CollectiveAlgorithm {
  Algorithm algorithm;
  const char* name;
  std::vector<CollectiveKind> kinds;  // the collectives it plans; for others the kind's default runs
  Planner plan;
  // Whether it can run this collective on this topology (null: always); `auto` skips it where not.
  bool (*available)(const topology::Topology& topo, const Collective& c) = nullptr;
};

// In the order valid values are listed.
const std::vector<CollectiveAlgorithm>& collective_algorithms();
// Names of the algorithms that plan `kind`, in registry order (e.g. all_reduce: ring, tree, hierarchical).
std::vector<std::string> algorithm_names(CollectiveKind kind);
std::vector<Algorithm> algorithms_for(CollectiveKind kind);
// The planner that runs `kind` with `algorithm`: the algorithm's own if it plans that kind, else the
// kind's default (the first algorithm that plans it; send_recv is always one point-to-point transfer).
Planner planner_for(CollectiveKind kind, Algorithm algorithm);
// False when the algorithm's `available` says it cannot run `c` on `topo` (e.g. nvls off an NVSwitch).
bool algorithm_available(const topology::Topology& topo, const Collective& c, Algorithm algorithm);

}  // namespace podsim::network
