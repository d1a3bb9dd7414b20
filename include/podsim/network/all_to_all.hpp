// The all-to-all of expert parallelism, folded by symmetry so that thousands of ranks stay a few thousand
// flows (an all-to-all over n ranks is n^2 flows; 2048 ranks would be 4M).
#pragma once

#include <string>
#include <vector>

#include "podsim/plan/flow.hpp"
#include "podsim/topology/topology.hpp"

namespace podsim::network {

struct FoldedAllToAll {
  plan::CommPhase phase;
  std::string fold;  // how it was folded and why that is exact, for StepPlan::notes
};

// Every rank of `group` sends bytes_per_rank / n to every rank (itself included, as nccl-tests counts).
// - Torus: per-link aggregated flows (torus_collectives.hpp), exact on every ICI link.
// - Switched fabric with one NIC per device (rails) and a group of whole servers: PXN sends the data for a
//   GPU on rail r of another server through the local GPU on rail r, so (a) inside a server GPU g sends
//   every other local GPU g' its own share plus the shares it relays for rail(g') of every other server:
//   one NVLink flow of servers x per_pair bytes; (b) between servers, the rail-r GPU of server a sends the
//   rail-r GPU of server b the shares of all local GPUs: one flow of devices_per_node x per_pair bytes.
//   These flows put exactly the all-to-all's bytes on every NVLink port, PCIe link and InfiniBand link.
//   Rails share no InfiniBand link and are symmetric, so only rail 0's inter-server flows are simulated;
//   every server's NVLink ports carry the same load and serve no other server, so only the first
//   server's NVLink flows are.
// - Otherwise every pair is a flow (at most 512 ranks; more throws InputError).
FoldedAllToAll folded_all_to_all(const topology::Topology& topo, const std::vector<int>& group,
                                 double bytes_per_rank);

}  // namespace podsim::network
