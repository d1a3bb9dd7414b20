// Collective algorithms as flows over the topology's real links.
//
// Sizes follow nccl-tests: `bytes` is the per-rank buffer for all_reduce and broadcast, the full gathered
// buffer for all_gather and reduce_scatter, the bytes each rank sends in all_to_all, and the message for
// send_recv. Bus bandwidth factors are nccl-tests' too, so podsim's output reads like theirs.
#pragma once

#include <string>
#include <vector>

#include "podsim/core/names.hpp"
#include "podsim/plan/flow.hpp"
#include "podsim/topology/topology.hpp"

namespace podsim::network {

enum class CollectiveKind { all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, send_recv };
inline constexpr auto kCollectiveKindNames =
    name_table<CollectiveKind>({{CollectiveKind::all_reduce, "all_reduce"},
                                {CollectiveKind::all_gather, "all_gather"},
                                {CollectiveKind::reduce_scatter, "reduce_scatter"},
                                {CollectiveKind::all_to_all, "all_to_all"},
                                {CollectiveKind::broadcast, "broadcast"},
                                {CollectiveKind::send_recv, "send_recv"}});
// Names, the collectives each plans and the planners: collective_registry.hpp.
// `automatic` ("auto") is not an algorithm but the request to pick one: the least predicted time among
// those that plan the collective (select_collective), as NCCL's tuner does.
// nvls: NVLink SHARP, the reduction done in the NVSwitch (one NVLink domain, or servers over InfiniBand
// SHARP; nvls_collective.cpp). nvls_tree: NVLS inside each domain, NCCL's tree across them. collnet_direct:
// InfiniBand SHARP across servers, direct exchange inside them (collnet_collective.cpp).
// pat: NCCL's PAT all_gather / reduce_scatter, one rank per server (pat_collective.cpp).
enum class Algorithm { ring, tree, hierarchical, direct, nvls, nvls_tree, pat, collnet_direct, automatic };
// NCCL's protocols (NCCL_PROTO): LL (8-byte flag+data lines: lowest latency, half the bandwidth), LL128
// (128-byte lines, 120 of payload), Simple (full bandwidth, highest latency). `automatic` picks by predicted
// time. Profiles without `protocols:` model one protocol (launch + step latencies, full bandwidth).
enum class Protocol { automatic, ll, ll128, simple };

const char* to_string(CollectiveKind k);
const char* to_string(Algorithm a);                        // from the registry
CollectiveKind parse_collective(const std::string& name);  // throws std::invalid_argument
Algorithm parse_algorithm(const std::string& name);        // throws std::invalid_argument; "auto" too
const char* to_string(Protocol p);                         // "auto", "LL", "LL128", "Simple"
Protocol parse_protocol(const std::string& name);          // any case; throws std::invalid_argument
std::vector<std::string> protocol_choices();               // auto, LL, LL128, Simple

struct Collective {
  CollectiveKind kind = CollectiveKind::all_reduce;
  std::vector<int> group;  // device ranks, in ring order
  double bytes = 0;
  Algorithm algorithm = Algorithm::ring;
  Protocol protocol = Protocol::automatic;
};

// What runs when a collective asks for `auto`: the algorithm x protocol with the least predicted time on
// an idle network (network::idle_plan_time of each candidate's plan; 0 when there was only one candidate).
struct CollectiveChoice {
  Algorithm algorithm = Algorithm::ring;
  Protocol protocol = Protocol::simple;
  double predicted_seconds = 0;
};
CollectiveChoice select_collective(const topology::Topology& topo, const Collective& c);
// The fabric profile describes this protocol for this algorithm (false for profiles without `protocols:`,
// where only Simple is modelled).
bool protocol_modelled(const topology::Topology& topo, Algorithm a, Protocol p);
// A collective of `kind` over `group` with the default algorithm (ring; plan_collective picks per topology).
Collective make_collective(CollectiveKind kind, std::vector<int> group, double bytes);

// nccl-tests busbw / algbw factor: 2(n-1)/n for all_reduce, (n-1)/n for all_gather, reduce_scatter and
// all_to_all, 1 otherwise.
double bus_factor(CollectiveKind kind, int ranks);

// Decomposes a collective into phases of concurrent flows. Ring: one phase, NCCL-style channels (one ring
// per rail when a group spans several GPUs on each of several servers). Tree: one phase of a reduce+
// broadcast binary tree. Hierarchical all_reduce: intra-node reduce-scatter, inter-node all_reduce per
// local rank, intra-node all-gather. Direct: every pair at once (all_to_all).
// On a torus (TPU pods) the plan comes from torus_collectives.hpp (rings per dimension).
plan::CommPlan plan_collective(const topology::Topology& topo, const Collective& c);
// The algorithms above whatever the topology (what plan_collective does on switched fabrics).
plan::CommPlan plan_collective_generic(const topology::Topology& topo, const Collective& c);

// Several single-phase plans run back to back by the same ranks (e.g. the two all-reduces of a layer)
// as one phase: bytes of identical (src, dst) flows add up, latencies add up. Exact on an idle network
// when the plans share their bottleneck, which collectives over one group do.
plan::CommPhase serial_merge(const std::vector<plan::CommPlan>& plans);
// Plans run at the same time by disjoint groups (e.g. one ring per rail): phase i of the result holds
// the flows of phase i of every plan, with the largest latency.
plan::CommPlan concurrent(const std::vector<plan::CommPlan>& plans);
// The same plan with every flow's bytes and the latency multiplied by `factor`.
plan::CommPlan scaled(const plan::CommPlan& plan, double factor);

// Software latency of one algorithm step between two devices: the largest per-class step latency on the
// route (so a ring that crosses InfiniBand anywhere pays the InfiniBand step).
double step_latency(const topology::Topology& topo, int src, int dst);

}  // namespace podsim::network
