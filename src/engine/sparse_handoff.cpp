#include "sparse_handoff.hpp"

#include <algorithm>
#include <cstdlib>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <stdexcept>
#include <string>

#include "link_classes.hpp"

namespace podsim::engine {

namespace sg4 = simgrid::s4u;

SparseHandoff::SparseHandoff(const topology::Topology& topo, const plan::TaskGraph& graph,
                             const Platform& platform)
    : topo_(topo), graph_(graph), platform_(platform), representative_(duplicate_link_classes(topo, graph)) {
  class_coefficient_.assign(topo.links.size() * 2, 0.0);
  for (int i = static_cast<int>(platform.spare_hosts.size()) - 1; i >= 0; --i) free_.push_back(i);
  coefficient_.assign(topo.links.size() * 2, 0.0);
  routes_.resize(graph.plans.size());
  for (size_t p = 0; p < graph.plans.size(); ++p) routes_[p].resize(graph.plans[p].size());
}

// The dense matrix's order: hosts by first appearance in the phase's flows, pairs row-major, a pair's
// flows in phase order.
SparseHandoff::PhaseRoutes SparseHandoff::build_routes(const topology::Topology& topo,
                                                       const plan::CommPhase& phase) {
  std::unordered_map<int, int> index;  // vertex -> host index in the dense order
  for (const auto& f : phase.flows) {
    if (plan::moves_nothing(f)) continue;  // hosts by topology vertex: a flow may end at a switch (NVLS)
    for (int v : {plan::source_vertex(topo, f), plan::target_vertex(topo, f)})
      index.emplace(v, static_cast<int>(index.size()));
  }
  const long long n = static_cast<long long>(index.size());
  std::vector<int> vertex_of(n);
  for (const auto& [vertex, i] : index) vertex_of[i] = vertex;
  std::vector<std::pair<long long, int>> cells;  // (src index * n + dst index, flow), phase order
  for (int i = 0; i < static_cast<int>(phase.flows.size()); ++i) {
    const auto& f = phase.flows[i];
    if (plan::moves_nothing(f)) continue;
    cells.push_back({index[plan::source_vertex(topo, f)] * n + index[plan::target_vertex(topo, f)], i});
  }
  std::stable_sort(cells.begin(), cells.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  PhaseRoutes r;
  topology::Route route;
  for (size_t c = 0; c < cells.size(); ++c) {
    r.flow_bytes.push_back(phase.flows[cells[c].second].bytes);
    if (c + 1 < cells.size() && cells[c + 1].first == cells[c].first) continue;  // the pair goes on
    r.first_flow.push_back(static_cast<int>(r.flow_bytes.size()));
    route.clear();
    topo.router().route(vertex_of[cells[c].first / n], vertex_of[cells[c].first % n], route);
    for (const auto& hop : route) r.dirs.push_back(hop.link * 2 + (hop.forward ? 0 : 1));
    r.first_dir.push_back(static_cast<int>(r.dirs.size()));
  }
  r.ready = true;
  return r;
}

SparseHandoff::PhaseRoutes& SparseHandoff::routes_of(int p, int k) {
  PhaseRoutes& kept = routes_[p][k];
  if (kept.ready) return kept;
  PhaseRoutes built = build_routes(topo_, graph_.plans[p][k]);
  if (budget_ < built.size()) {
    fresh_ = std::move(built);
    return fresh_;
  }
  budget_ -= built.size();
  kept = std::move(built);
  return kept;
}

// What L07's constructor computes from the dense matrix: bytes[i][j] summed over the pair's flows in phase
// order (the replay's dense matrix), then, over pairs in row-major order, each link of the pair's route
// gets bytes[i][j] added to its coefficient (lmm::System::expand_add).
void SparseHandoff::sum_link_coefficients(const PhaseRoutes& r, double share) {
  const size_t pairs = r.first_dir.size() - 1;
  for (size_t q = 0; q < pairs; ++q) {
    double bytes = 0;
    for (int f = r.first_flow[q]; f < r.first_flow[q + 1]; ++f) bytes += r.flow_bytes[f] * share;
    if (!(bytes > 0.0)) continue;
    for (int i = r.first_dir[q]; i < r.first_dir[q + 1]; ++i) {
      const int ld = r.dirs[i];
      if (coefficient_[ld] == 0.0) used_dirs_.push_back(ld);
      coefficient_[ld] += bytes;
    }
  }
}

sg4::Exec* SparseHandoff::start(int flight, int p, int k, double share) {
  used_dirs_.clear();
  PhaseRoutes& routes = routes_of(p, k);
  if (share == 1.0 && routes.whole_ready) {  // the sums below, kept from the phase's first whole hand-off
    used_dirs_ = routes.whole_dirs;
    for (size_t i = 0; i < used_dirs_.size(); ++i) coefficient_[used_dirs_[i]] = routes.whole_coefficients[i];
  } else {
    sum_link_coefficients(routes, share);
    if (share == 1.0 && &routes != &fresh_ && budget_ >= 2 * used_dirs_.size()) {
      budget_ -= 2 * used_dirs_.size();
      routes.whole_dirs = used_dirs_;
      for (int ld : used_dirs_) routes.whole_coefficients.push_back(coefficient_[ld]);
      routes.whole_ready = true;
    }
  }
  // Links of equal coefficient share one route between two spare hosts.
  std::unordered_map<double, int> class_of;
  std::vector<VirtualRoutes::Links> classes;
  std::vector<double> class_bytes;
  // A duplicate of a link already named is the same LMM row: named once, through its class's first link.
  for (int ld : used_dirs_) {
    const int rep = representative_[ld];
    const double c = coefficient_[ld];
    coefficient_[ld] = 0.0;
    if (class_coefficient_[rep] != 0.0) {
      if (class_coefficient_[rep] != c)
        throw std::logic_error("duplicate link directions with different bytes");
      continue;
    }
    class_coefficient_[rep] = c;
    auto [it, fresh] = class_of.emplace(c, static_cast<int>(classes.size()));
    if (fresh) classes.emplace_back(), class_bytes.push_back(c);
    classes[it->second].push_back(platform_.link_dir[rep]);
  }
  for (int ld : used_dirs_) class_coefficient_[representative_[ld]] = 0.0;
  const size_t class_count = classes.size();
  size_t m = 2;
  while (m * (m - 1) < class_count) ++m;
  if (free_.size() < m) return nullptr;
  std::vector<int>& mine = taken_[flight];
  std::vector<sg4::Host*> hosts;
  for (size_t i = 0; i < m; ++i) {
    mine.push_back(free_.back());
    free_.pop_back();
    hosts.push_back(platform_.spare_hosts[mine.back()]);
  }
  std::vector<double> bytes(m * m, 0.0), flops(m, 0.0);
  size_t c = 0;
  for (size_t a = 0; a < m && c < class_count; ++a)
    for (size_t b = 0; b < m && c < class_count; ++b) {
      if (a == b) continue;
      bytes[a * m + b] = class_bytes[c];
      platform_.virtual_routes->set(hosts[a]->get_netpoint()->id(), hosts[b]->get_netpoint()->id(),
                                    std::move(classes[c]));
      ++c;
    }
  sg4::ExecPtr exec = sg4::Exec::init()->set_hosts(hosts)->set_flops_amounts(flops)->set_bytes_amounts(bytes);
  exec->start();
  return exec.detach();
}

void SparseHandoff::release(int flight) {
  auto it = taken_.find(flight);
  if (it == taken_.end()) return;
  for (int a : it->second)
    for (int b : it->second)
      if (a != b)
        platform_.virtual_routes->erase(platform_.spare_hosts[a]->get_netpoint()->id(),
                                        platform_.spare_hosts[b]->get_netpoint()->id());
  for (int h : it->second) free_.push_back(h);
  taken_.erase(it);
}

}  // namespace podsim::engine
