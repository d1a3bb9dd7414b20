// How a measured collective looks in podsim's network model: the bridge between an nccl-tests log and
// the fabric fit (fabric_fit.hpp). The log's ranks are placed on the topology the way
// nccl-tests places them (fill each server, servers in order), the collective is planned with podsim's
// own algorithm, and its idle-network cost is split into the parts the profile's parameters scale.
#pragma once

#include "podsim/fit/fabric_fit.hpp"
#include "podsim/fit/nccl_tests_log.hpp"
#include "podsim/network/collective.hpp"
#include "podsim/topology/topology.hpp"

namespace podsim::fit {

// The collective the log measured, on `topo`. Throws InputError when the log's ranks do not fit the
// topology (more ranks per host than devices per server, more hosts than servers, uneven hosts).
network::Collective measured_collective(const topology::Topology& topo, const calibration::NcclTestsLog& log);

// Steps, bounding link class, busbw at 100% efficiency and route latency of `c` on `topo`.
calibration::CollectiveGeometry collective_geometry(const topology::Topology& topo, network::Collective c);

// podsim's idle-network time of `c` with `profile` applied to the topology's links.
double predicted_collective_time(const topology::Topology& topo, const calibration::FabricProfile& profile,
                                 network::Collective c);

}  // namespace podsim::fit
