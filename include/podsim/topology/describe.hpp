// Human description of a topology for `podsim topo describe`.
#pragma once

#include <string>

#include "podsim/topology/topology.hpp"

namespace podsim::topology {

std::string describe(const Topology& topo);

}  // namespace podsim::topology
