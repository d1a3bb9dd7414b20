// The flex dispatcher's token dispatch (and its mirror, the combine) as DeepEP and HybridEP move it: in two
// stages, not as an all-to-all. A token crosses to each other node that holds one of its experts once, over
// RDMA to the rank with its own index there (the scale-out stage); inside a node, the rank that holds it
// (its source, or the rank it arrived at) writes it over NVLink into each other local rank that holds one of
// its experts (the scale-up stage). The stages are pipelined in chunks, so the dispatch lasts as long as the
// slower of them: one phase.
//
// Their kernels are not NCCL's: the fabric profile's `expert_dispatch:` gives the fraction of each link
// class's nominal bandwidth they reach (FabricProfile::dispatch_efficiency); a flow that crosses a class
// where it is below link_efficiency carries link_efficiency / dispatch_efficiency times its bytes, the way
// protocol_cost.cpp scales a protocol's payload share.
#pragma once

#include <vector>

#include "podsim/plan/flow.hpp"
#include "podsim/topology/topology.hpp"

namespace podsim::network {

struct HierarchicalDispatch {
  std::vector<int> group;          // the EP ranks; those on one node form its NVLink stage
  double to_each_remote_peer = 0;  // bytes a rank sends to the rank of its index on each other node
  double to_each_local_peer = 0;   // bytes a rank's NVLink stage writes into each other rank of its node
};

// The phase of flows of one dispatch (or combine) over `d.group`, folded by symmetry where the group is
// whole servers with one NIC per device: the first node's NVLink flows stand for every node's, and the
// rank-0 counterparts' scale-out flows for every index's (rails share no InfiniBand link). Otherwise every
// flow; where nodes hold unequal shares of the group (an EP group of 128 over NVL72 racks), a rank's
// counterpart on a smaller node is the rank of its index modulo that node's ranks.
plan::CommPhase plan_hierarchical_dispatch(const topology::Topology& topo, const HierarchicalDispatch& d);

}  // namespace podsim::network
