#include "link_classes.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <utility>

namespace podsim::engine {
namespace {

uint64_t bits(double x) {
  uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// splitmix64 finalizer: a well-mixed 64-bit hash step.
uint64_t mix(uint64_t h, uint64_t v) {
  uint64_t z = h + 0x9e3779b97f4a7c15ULL + v;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

struct Pair {
  double bytes = 0;    // the pair's bytes at share 1 (what the hand-off sums, scaled)
  uint64_t flows = 0;  // hash of the sequence of its flows' bytes (the terms of that sum)
};

struct Key {
  uint64_t a, b;
  bool operator==(const Key& o) const { return a == o.a && b == o.b; }
};
struct KeyHash {
  size_t operator()(const Key& k) const { return k.a ^ (k.b * 0x9e3779b97f4a7c15ULL); }
};

}  // namespace

std::vector<int> duplicate_link_classes(const topology::Topology& topo, const plan::TaskGraph& graph) {
  const size_t dirs = topo.links.size() * 2;
  std::vector<uint64_t> h1(dirs, 0), h2(dirs, 0);
  std::vector<char> used(dirs, 0);
  std::unordered_map<int, int> index;
  std::unordered_map<long long, Pair> pairs;
  std::vector<std::pair<long long, Pair>> sorted;
  topology::Route route;
  uint64_t phase_id = 0;
  for (const auto& plan : graph.plans)
    for (const auto& phase : plan) {
      ++phase_id;
      // The dense order of sparse_handoff.cpp: hosts by first appearance, pairs row-major.
      index.clear();
      pairs.clear();
      for (const auto& f : phase.flows) {
        if (plan::moves_nothing(f)) continue;  // by topology vertex, as sparse_handoff.cpp
        for (int v : {plan::source_vertex(topo, f), plan::target_vertex(topo, f)})
          index.emplace(v, static_cast<int>(index.size()));
      }
      const long long n = static_cast<long long>(index.size());
      std::vector<int> device_of(n);
      for (const auto& [device, i] : index) device_of[i] = device;
      for (const auto& f : phase.flows) {
        if (plan::moves_nothing(f)) continue;
        Pair& p = pairs[index[plan::source_vertex(topo, f)] * n + index[plan::target_vertex(topo, f)]];
        p.bytes += f.bytes;
        p.flows = mix(p.flows, bits(f.bytes));
      }
      sorted.assign(pairs.begin(), pairs.end());
      std::sort(sorted.begin(), sorted.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
      for (const auto& [cell, p] : sorted) {
        route.clear();
        topo.router().route(device_of[cell / n], device_of[cell % n], route);  // vertices
        for (const auto& hop : route) {
          size_t ld = static_cast<size_t>(hop.link) * 2 + (hop.forward ? 0 : 1);
          used[ld] = 1;
          h1[ld] = mix(mix(h1[ld], phase_id), p.flows);
          h2[ld] = mix(mix(h2[ld] ^ 0x5bd1e995, bits(p.bytes)), phase_id * 0x2545f4914f6cdd1dULL);
        }
      }
    }
  std::vector<int> rep(dirs);
  std::unordered_map<Key, int, KeyHash> first;
  for (size_t ld = 0; ld < dirs; ++ld) {
    rep[ld] = static_cast<int>(ld);
    if (!used[ld]) continue;
    Key key{mix(h1[ld], bits(topo.links[ld / 2].effective_bandwidth())), h2[ld]};
    rep[ld] = first.emplace(key, static_cast<int>(ld)).first->second;
  }
  return rep;
}

}  // namespace podsim::engine
