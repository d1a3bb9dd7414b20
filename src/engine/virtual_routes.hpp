// Private to the engine. Routes between the platform's spare hosts, set per SimGrid parallel task.
//
// Why: a SimGrid 3.32 parallel task takes its bytes as a dense hosts x hosts matrix, which L07 scans whole
// (twice) and keeps for the task's lifetime; a phase of n flows among n devices costs O(n^2) time and
// memory for O(n) flows (a 3200-replica gradient ring: 80 MiB and 10^7 cells per hand-off). But all that
// L07 derives from the matrix is one LMM variable whose coefficient on each link is the sum of the bytes of
// the flows routed over it (plus host CPU terms, zero here: no flops). sparse_handoff.cpp computes those
// coefficients itself and hands SimGrid the same variable through a few spare hosts whose routes, set here
// for the task's lifetime, are exactly the links of one coefficient value each.
#pragma once

#include <cstddef>
#include <unordered_map>
#include <vector>

namespace simgrid::s4u {
class Link;
}

namespace podsim::engine {

class VirtualRoutes {
 public:
  using Links = std::vector<simgrid::s4u::Link*>;
  void set(size_t src_netpoint, size_t dst_netpoint, Links links) {
    routes_[key(src_netpoint, dst_netpoint)] = std::move(links);
  }
  void erase(size_t src_netpoint, size_t dst_netpoint) { routes_.erase(key(src_netpoint, dst_netpoint)); }
  // The links of a route set here, or null for a route between devices (the topology's router answers).
  const Links* find(size_t src_netpoint, size_t dst_netpoint) const {
    auto it = routes_.find(key(src_netpoint, dst_netpoint));
    return it == routes_.end() ? nullptr : &it->second;
  }

 private:
  static unsigned long long key(size_t a, size_t b) { return (static_cast<unsigned long long>(a) << 32) | b; }
  std::unordered_map<unsigned long long, Links> routes_;
};

}  // namespace podsim::engine
