// Communication as flows between devices (plan layer; the network layer turns collectives into these). A
// collective becomes a short sequence of phases; the flows of one phase run concurrently and the phase ends
// when the slowest is done (this is how ring and tree collectives behave: every rank moves in lockstep with
// its neighbours).
//
// A flow's end is a device rank, or a topology vertex that is not a device: a switch that reduces or
// multicasts in the network (NVLink SHARP on NVSwitch). Such an end is routed by the topology's router
// like any other, so the engine shares the links it crosses with every other flow.
#pragma once

#include <vector>

#include "podsim/topology/topology.hpp"

namespace podsim::plan {

struct Flow {
  int src = -1;         // device rank (-1 when src_vertex names the start)
  int dst = -1;         // device rank (-1 when dst_vertex names the end)
  double bytes = 0;     // carried over the whole phase
  int src_vertex = -1;  // a topology vertex that is not a device (a reducing switch), else -1
  int dst_vertex = -1;
};

// A flow from a device into a switch vertex, and from a switch vertex to a device.
inline Flow to_switch(int device, int switch_vertex, double bytes) {
  return {device, -1, bytes, -1, switch_vertex};
}
inline Flow from_switch(int switch_vertex, int device, double bytes) {
  return {-1, device, bytes, switch_vertex, -1};
}

// The topology vertices a flow starts and ends at.
inline int source_vertex(const topology::Topology& topo, const Flow& f) {
  return f.src_vertex >= 0 ? f.src_vertex : topo.device_vertex[f.src];
}
inline int target_vertex(const topology::Topology& topo, const Flow& f) {
  return f.dst_vertex >= 0 ? f.dst_vertex : topo.device_vertex[f.dst];
}
// True when the flow puts nothing on the network (no bytes, or it starts where it ends).
inline bool moves_nothing(const Flow& f) {
  return f.bytes <= 0 || (f.src_vertex < 0 && f.dst_vertex < 0 && f.src == f.dst) ||
         (f.src_vertex >= 0 && f.src_vertex == f.dst_vertex);
}

struct CommPhase {
  std::vector<Flow> flows;
  double latency = 0;  // closed-form software latency of the phase (launch + algorithm steps), seconds
};

using CommPlan = std::vector<CommPhase>;

}  // namespace podsim::plan
