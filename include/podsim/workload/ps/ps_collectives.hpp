// Collectives of parameter-server training, built from the network layer's algorithms.
#pragma once

#include <vector>

#include "podsim/network/collective.hpp"
#include "podsim/topology/topology.hpp"

namespace podsim::workload {

// The dense-gradient all-reduce as the communication library would run it: the fastest on an idle
// network of ring, tree and hierarchical (as NCCL's and MPI's tuners pick by size and scale; a ring's
// 2(n-1) latency steps make it lose to a tree over hundreds of servers with small gradients).
struct AllReducePlan {
  plan::CommPlan plan;
  network::Algorithm algorithm = network::Algorithm::ring;
};
AllReducePlan fastest_all_reduce(const topology::Topology& topo, const std::vector<int>& group, double bytes);

// An all-to-all in which every rank sends `bytes_per_rank` spread evenly over the group (nccl-tests'
// convention, as network::plan_collective). Up to `max_shifts` + 1 ranks it is the direct all-to-all,
// every pair a flow. Beyond, its n(n-1) flows would dominate the simulation (300 servers: 89,700 flows a
// phase), so it is sampled: an all-to-all is the sum of the n-1 cyclic shifts i -> i+s, each carrying
// 1/n of a rank's bytes; `max_shifts` evenly spaced shifts carry it all instead. Every rank still sends
// and receives exactly its bytes, so links next to the ranks carry exactly the all-to-all's load; links
// shared by groups of ranks (rack uplinks) carry the sampled shifts' average share, which tests check to
// be within 1% of the full all-to-all's time on the presets.
plan::CommPlan all_to_all(const topology::Topology& topo, const std::vector<int>& group,
                          double bytes_per_rank, int max_shifts = 48);

}  // namespace podsim::workload
