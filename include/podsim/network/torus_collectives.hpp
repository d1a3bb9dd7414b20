// Collectives on a torus (TPU pods), as plan_collective produces them when the topology is a torus.
//
// - all_reduce: bidirectional rings per dimension. Reduce-scatter between the cores of each chip (on chip,
//   closed form), then along x, y (and z), each dimension one phase in which every ring of that dimension
//   sends half its data each way round; then all-gather back in reverse order. reduce_scatter and
//   all_gather are the first and second half. Used when the group is a box of chips (every combination of
//   its x, y, z coordinates) with the same number of cores on each chip; any other group gets the plain
//   ring of collective.cpp. On a whole translation-symmetric torus the rings of a dimension are identical
//   and link-disjoint: the ring through chip 0 stands for them all.
// - all_to_all: direct (every pair), with the contention dimension-order routes cause, represented as one
//   flow per loaded link carrying exactly that link's load (see torus_all_to_all).
// - Traffic between two cores of one chip crosses no link: it is costed in closed form at the chip's
//   core bandwidth and added to the phase latency.
#pragma once

#include <string>
#include <vector>

#include "podsim/network/collective.hpp"
#include "podsim/topology/torus.hpp"

namespace podsim::network {

plan::CommPlan plan_torus_collective(const topology::Topology& topo, const topology::TorusGeometry& geo,
                                     const Collective& c);

// All-to-all where each rank of `group` sends bytes_per_rank / n to every rank. Folded without loss on the
// ICI links: the load of every link direction is summed over the routes of all pairs of chips (from one
// source chip on a translation-symmetric torus, where every link of a dimension and direction carries the
// same load), and the phase holds one flow per loaded link direction, between the chips at its two ends,
// with that load: each link carries exactly what the n^2 flows would put on it. When the loads of every
// (dimension, direction) class are uniform, only the links met walking from chip 0 along each dimension
// are kept (2 x (X + Y + Z) flows): exact alone and next to other traffic with the same symmetry. The
// largest route latency is added to the phase latency in closed form (the kept flows are one hop long).
plan::CommPhase torus_all_to_all(const topology::Topology& topo, const topology::TorusGeometry& geo,
                                 const std::vector<int>& group, double bytes_per_rank);

}  // namespace podsim::network
