// Private to the engine. Link directions whose SimGrid constraints are exact duplicates, so that a phase
// handed to SimGrid names one link per class (sparse_handoff.cpp) instead of every copy.
//
// Why it is exact: two link directions with the same capacity that, in every phase of the task graph, are
// crossed by the same sequence of flow bytes (pairs in L07's summation order) get bit-identical LMM rows
// for any set of phases in flight and any share of bytes left: the same variables with the same
// coefficients and bounds. FairBottleneck computes the same usage, increments and saturation for both, so
// dropping all but one leaves every rate unchanged. This folds what symmetry makes identical without being
// told: the data-parallel replicas of a Megatron step put the same bytes on isomorphic links (pipeline
// transfers and gradient rings carry every replica), so their NIC and PCIe hops collapse into a handful of
// classes and the LMM variable of a phase shrinks from ~6 dp links to the distinct ones. Classes are keyed by
// a 128-bit hash of that sequence (a collision, ~2^-100 here, would merge two links: accepted and stated).
#pragma once

#include <vector>

#include "podsim/plan/task_graph.hpp"
#include "podsim/topology/topology.hpp"

namespace podsim::engine {

// For each link direction (link * 2 + (forward ? 0 : 1)): the first direction of its class (itself when
// it has no duplicate; unused directions map to themselves).
std::vector<int> duplicate_link_classes(const topology::Topology& topo, const plan::TaskGraph& graph);

}  // namespace podsim::engine
