#include "podsim/network/collective_registry.hpp"

#include <stdexcept>

#include "collective_planners.hpp"

namespace podsim::network {

using K = CollectiveKind;

const std::vector<CollectiveAlgorithm>& collective_algorithms() {
  static const std::vector<CollectiveAlgorithm> registry = {
      {Algorithm::ring, "ring", {K::all_reduce, K::all_gather, K::reduce_scatter, K::broadcast}, &plan_ring},
      {Algorithm::tree, "tree", {K::all_reduce}, &plan_tree},
      {Algorithm::hierarchical, "hierarchical", {K::all_reduce}, &plan_hierarchical},
      {Algorithm::direct, "direct", {K::all_to_all}, &plan_direct},
      {Algorithm::nvls, "nvls", {K::all_reduce}, &plan_nvls, &nvls_available},
      {Algorithm::nvls_tree, "nvls_tree", {K::all_reduce}, &plan_nvls_tree, &nvls_tree_available},
      {Algorithm::pat, "pat", {K::all_gather, K::reduce_scatter}, &plan_pat, &pat_available},
      {Algorithm::collnet_direct,
       "collnet_direct",
       {K::all_reduce},
       &plan_collnet_direct,
       &collnet_available},
  };
  return registry;
}

namespace {

bool plans(const CollectiveAlgorithm& a, CollectiveKind kind) {
  for (K k : a.kinds)
    if (k == kind) return true;
  return false;
}

}  // namespace

std::vector<Algorithm> algorithms_for(CollectiveKind kind) {
  std::vector<Algorithm> out;
  for (const auto& a : collective_algorithms())
    if (plans(a, kind)) out.push_back(a.algorithm);
  return out;
}

std::vector<std::string> algorithm_names(CollectiveKind kind) {
  std::vector<std::string> out;
  for (const auto& a : collective_algorithms())
    if (plans(a, kind)) out.emplace_back(a.name);
  out.emplace_back("auto");  // the least predicted time among the above (select_collective)
  return out;
}

Planner planner_for(CollectiveKind kind, Algorithm algorithm) {
  if (kind == K::send_recv) return &plan_point_to_point;
  const CollectiveAlgorithm* fallback = nullptr;
  for (const auto& a : collective_algorithms()) {
    if (!plans(a, kind)) continue;
    if (a.algorithm == algorithm) return a.plan;
    if (!fallback) fallback = &a;
  }
  if (!fallback) throw std::logic_error(std::string("no algorithm plans ") + to_string(kind));
  return fallback->plan;
}

bool algorithm_available(const topology::Topology& topo, const Collective& c, Algorithm algorithm) {
  for (const auto& a : collective_algorithms())
    if (a.algorithm == algorithm) return !a.available || a.available(topo, c);
  return true;
}

const char* to_string(Algorithm a) {
  if (a == Algorithm::automatic) return "auto";
  for (const auto& entry : collective_algorithms())
    if (entry.algorithm == a) return entry.name;
  return "?";
}

Algorithm parse_algorithm(const std::string& name) {
  if (name == "auto") return Algorithm::automatic;
  for (const auto& entry : collective_algorithms())
    if (name == entry.name) return entry.algorithm;
  // The list only for the error: a plan search parses the same name for every candidate.
  std::string valid;
  for (const auto& entry : collective_algorithms())
    valid += (valid.empty() ? "" : ", ") + std::string(entry.name);
  throw std::invalid_argument("unknown algorithm '" + name + "' (valid: " + valid + ", auto)");
}

}  // namespace podsim::network
