// NCCL's protocols as costs of a step-wise algorithm (ring, tree), and the `auto` choice of algorithm and
// protocol. The structure follows NCCL's tuning model (NVIDIA/nccl src/graph/tuning.cc,
// ncclTopoTuneModel, commit 5067397c): time = base latency + steps inside a server x their latency + steps
// across servers x theirs + bytes / (bandwidth x the protocol's payload share). The numbers live in the
// fabric profiles (`protocols:`), with their provenance.
#include <cctype>
#include <limits>
#include <stdexcept>
#include <vector>

#include "collective_planners.hpp"
#include "podsim/network/collective_registry.hpp"
#include "podsim/network/link_load.hpp"

namespace podsim::network {

using topology::Topology;

namespace {

struct ProtocolName {
  Protocol protocol;
  const char* shown;    // NCCL's spelling, what outputs print
  const char* profile;  // the key in a fabric profile's `protocols:`
};
constexpr ProtocolName kProtocols[] = {{Protocol::automatic, "auto", "auto"},
                                       {Protocol::ll, "LL", "ll"},
                                       {Protocol::ll128, "LL128", "ll128"},
                                       {Protocol::simple, "Simple", "simple"}};

const char* profile_key(Protocol p) {
  for (const auto& n : kProtocols)
    if (n.protocol == p) return n.profile;
  return "simple";
}

std::string lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

}  // namespace

const char* to_string(Protocol p) {
  for (const auto& n : kProtocols)
    if (n.protocol == p) return n.shown;
  return "?";
}

Protocol parse_protocol(const std::string& name) {
  for (const auto& n : kProtocols)
    if (lower(name) == n.profile) return n.protocol;
  throw std::invalid_argument("unknown protocol '" + name + "' (valid: auto, LL, LL128, Simple)");
}

std::vector<std::string> protocol_choices() {
  std::vector<std::string> out;
  for (const auto& n : kProtocols) out.emplace_back(n.shown);
  return out;
}

const char* protocol_family(Algorithm a) {
  // Hierarchical all_reduce is made of rings, so it pays the ring's protocol costs.
  if (a == Algorithm::nvls) return "nvls";
  if (a == Algorithm::nvls_tree) return "nvls_tree";
  if (a == Algorithm::collnet_direct) return "collnet";
  if (a == Algorithm::pat) return "pat";
  return a == Algorithm::tree ? "tree" : a == Algorithm::direct ? nullptr : "ring";
}

bool protocol_modelled(const Topology& topo, Algorithm a, Protocol p) {
  const char* family = protocol_family(a);
  return family && topo.fabric_profile.protocol(family, profile_key(p)) != nullptr;
}

ProtocolTerms protocol_terms(const Topology& topo, const char* family, Protocol p, double steps,
                             double inter_steps) {
  ProtocolTerms t;
  const auto* cost =
      topo.fabric_profile.protocol(family, profile_key(p == Protocol::automatic ? Protocol::simple : p));
  if (!cost) return t;
  t.modelled = true;
  t.latency = cost->base + (steps - inter_steps) * cost->intra_step + inter_steps * cost->inter_step;
  t.byte_scale = 1.0 / cost->bandwidth_factor;
  return t;
}

CollectiveChoice select_collective(const Topology& topo, const Collective& c) {
  std::vector<Algorithm> algorithms = {c.algorithm};
  if (c.algorithm == Algorithm::automatic) algorithms = algorithms_for(c.kind);
  CollectiveChoice best;
  best.predicted_seconds = std::numeric_limits<double>::infinity();
  if (algorithms.size() > 1)  // `auto` considers only what can run here (nvls: one NVLink domain)
    std::erase_if(algorithms, [&](Algorithm a) { return !algorithm_available(topo, c, a); });
  for (Algorithm a : algorithms) {
    std::vector<Protocol> protocols = {c.protocol};
    if (c.protocol == Protocol::automatic) {
      protocols.clear();
      for (Protocol p : {Protocol::ll, Protocol::ll128, Protocol::simple})
        if (protocol_modelled(topo, a, p)) protocols.push_back(p);
      if (protocols.empty()) protocols.push_back(Protocol::simple);
    }
    if (algorithms.size() == 1 && protocols.size() == 1) return {a, protocols[0], 0};  // nothing to choose
    for (Protocol p : protocols) {
      Collective candidate = c;
      candidate.algorithm = a;
      candidate.protocol = p;
      double t = idle_plan_time(topo, plan_collective_generic(topo, candidate));
      // Strictly less: ties go to the earlier candidate (registry order, then LL before Simple).
      if (t < best.predicted_seconds) best = {a, p, t};
    }
  }
  return best;
}

}  // namespace podsim::network
