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
    : topo_(topo), platform_(platform), representative_(duplicate_link_classes(topo, graph)) {
  class_coefficient_.assign(topo.links.size() * 2, 0.0);
  for (int i = static_cast<int>(platform.spare_hosts.size()) - 1; i >= 0; --i) free_.push_back(i);
  coefficient_.assign(topo.links.size() * 2, 0.0);
}

// What L07's constructor computes from the dense matrix: bytes[i][j] summed over the pair's flows in phase
// order (the replay's dense matrix), then, over pairs in row-major order, each link of the pair's route
// gets bytes[i][j] added to its coefficient (lmm::System::expand_add).
void SparseHandoff::sum_link_coefficients(const plan::CommPhase& phase, double share) {
  index_.clear();
  pair_bytes_.clear();
  for (const auto& f : phase.flows) {
    if (plan::moves_nothing(f)) continue;  // hosts by topology vertex: a flow may end at a switch (NVLS)
    for (int v : {plan::source_vertex(topo_, f), plan::target_vertex(topo_, f)})
      index_.emplace(v, static_cast<int>(index_.size()));
  }
  const long long n = static_cast<long long>(index_.size());
  std::vector<int> device_of(n);
  for (const auto& [device, i] : index_) device_of[i] = device;
  for (const auto& f : phase.flows) {
    if (plan::moves_nothing(f)) continue;
    pair_bytes_[index_[plan::source_vertex(topo_, f)] * n + index_[plan::target_vertex(topo_, f)]] +=
        f.bytes * share;
  }
  std::vector<std::pair<long long, double>> pairs(pair_bytes_.begin(), pair_bytes_.end());
  std::sort(pairs.begin(), pairs.end());
  for (const auto& [cell, bytes] : pairs) {
    if (!(bytes > 0.0)) continue;
    route_.clear();
    topo_.router().route(device_of[cell / n], device_of[cell % n], route_);  // vertices
    for (const auto& hop : route_) {
      int ld = hop.link * 2 + (hop.forward ? 0 : 1);
      if (coefficient_[ld] == 0.0) used_dirs_.push_back(ld);
      coefficient_[ld] += bytes;
    }
  }
}

sg4::Exec* SparseHandoff::start(int flight, const plan::CommPhase& phase, double share) {
  used_dirs_.clear();
  sum_link_coefficients(phase, share);
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
  const size_t k = classes.size();
  size_t m = 2;
  while (m * (m - 1) < k) ++m;
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
  for (size_t a = 0; a < m && c < k; ++a)
    for (size_t b = 0; b < m && c < k; ++b) {
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
