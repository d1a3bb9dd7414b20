#include "podsim/network/torus_collectives.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

namespace podsim::network {
namespace {

using topology::Topology;
using topology::TorusGeometry;

// The group as a box of chips: sorted coordinates per dimension and ranks per chip; empty `axes` when the
// group is not a box with the same number of ranks on every chip.
struct Box {
  std::vector<std::vector<int>> axes;
  int per_chip = 0;
};

Box box_of(const TorusGeometry& geo, const std::vector<int>& group) {
  std::map<int, int> ranks_on;
  for (int d : group) ranks_on[geo.chip_of(d)]++;
  Box box;
  const size_t D = geo.dims.size();
  std::vector<std::set<int>> seen(D);
  for (const auto& [chip, count] : ranks_on) {
    if (box.per_chip == 0) box.per_chip = count;
    if (count != box.per_chip) return {};
    auto c = geo.coords(chip);
    for (size_t d = 0; d < D; ++d) seen[d].insert(c[d]);
  }
  size_t volume = 1;
  for (const auto& s : seen) volume *= s.size();
  if (volume != ranks_on.size()) return {};
  for (const auto& s : seen) box.axes.emplace_back(s.begin(), s.end());
  return box;
}

double ici_step(const Topology& topo) {
  return topo.fabric_profile.step(topology::to_string(topology::LinkClass::ici));
}

// One phase of the per-dimension rings along dimension d: every ring of the box in that dimension moves
// `edge_bytes` per rank per ring edge, half each way round; a chip's ranks share its links, so their
// flows are one chip-to-chip flow of per_chip times the bytes.
plan::CommPhase dimension_phase(const Topology& topo, const TorusGeometry& geo, const Box& box, size_t d,
                                double edge_bytes) {
  plan::CommPhase phase;
  // On a translation-symmetric torus covered whole, the rings of one dimension are identical and share no
  // link, so the ring through chip 0 stands for all of them (exact alone, and next to other traffic with
  // the same symmetry).
  bool fold = geo.translation_symmetric();
  for (size_t e = 0; e < geo.dims.size(); ++e) fold &= static_cast<int>(box.axes[e].size()) == geo.dims[e];
  const int n = static_cast<int>(box.axes[d].size());
  std::map<std::pair<int, int>, double> flows;
  std::vector<size_t> index(geo.dims.size(), 0);
  while (true) {
    bool kept = !fold || std::all_of(index.begin(), index.end(), [](size_t i) { return i == 0; });
    if (index[d] == 0 && kept) {  // one ring per combination of the other coordinates
      std::vector<int> c(geo.dims.size());
      for (size_t e = 0; e < geo.dims.size(); ++e) c[e] = box.axes[e][index[e]];
      std::vector<int> ring;
      for (int i = 0; i < n; ++i) {
        c[d] = box.axes[d][i];
        ring.push_back(geo.chip_at(c));
      }
      for (int i = 0; i < n; ++i) {
        int a = ring[i], b = ring[(i + 1) % n];
        flows[{a, b}] += box.per_chip * edge_bytes / 2;
        flows[{b, a}] += box.per_chip * edge_bytes / 2;
      }
    }
    size_t e = 0;
    while (e < index.size() && ++index[e] == box.axes[e].size()) index[e++] = 0;
    if (e == index.size()) break;
  }
  for (const auto& [pair, bytes] : flows)
    phase.flows.push_back({pair.first * geo.cores_per_chip, pair.second * geo.cores_per_chip, bytes});
  phase.latency = (n - 1) * ici_step(topo);
  return phase;
}

// Reduce-scatter (or all-gather) phases of `bytes` per rank: on chip first, then x, y, z.
std::vector<plan::CommPhase> scatter_phases(const Topology& topo, const TorusGeometry& geo, const Box& box,
                                            double bytes) {
  std::vector<plan::CommPhase> phases;
  double data = bytes;
  if (box.per_chip > 1) {
    plan::CommPhase on_chip;
    on_chip.latency = (box.per_chip - 1.0) / box.per_chip * data / geo.core_bandwidth;
    phases.push_back(on_chip);
    data /= box.per_chip;
  }
  for (size_t d = 0; d < box.axes.size(); ++d) {
    int n = static_cast<int>(box.axes[d].size());
    if (n < 2) continue;
    phases.push_back(dimension_phase(topo, geo, box, d, (n - 1.0) / n * data));
    data /= n;
  }
  return phases;
}

// Flows between ranks of one chip cross no link: their time, at the chip's core bandwidth, joins the
// phase latency.
void cost_on_chip_flows(const TorusGeometry& geo, plan::CommPlan& plan) {
  for (auto& phase : plan) {
    std::map<int, double> sent;
    std::vector<plan::Flow> kept;
    for (const auto& f : phase.flows) {
      if (f.src != f.dst && geo.chip_of(f.src) == geo.chip_of(f.dst))
        sent[f.src] += f.bytes;
      else
        kept.push_back(f);
    }
    double worst = 0;
    for (const auto& [rank, bytes] : sent) worst = std::max(worst, bytes);
    phase.latency += worst / geo.core_bandwidth;
    phase.flows = std::move(kept);
  }
}

// When every link of each (dimension, direction) class carries the same load (always on a translation-
// symmetric torus; on a twisted one when the routes happen to balance), the links met walking from chip
// 0 along each dimension stand for all of them: alone, the phase is as slow as its most loaded class;
// next to another pattern with the same symmetry (rings per dimension), every link of a class sees the
// same competition, so the kept links share exactly as all would. Otherwise every link stays.
void keep_one_walk_per_dimension_if_uniform(const TorusGeometry& geo,
                                            std::unordered_map<long long, double>& load) {
  const size_t D = geo.dims.size();
  std::vector<double> lo(2 * D, -1), hi(2 * D, -1);
  const size_t slots = geo.link_towards.size();
  for (size_t slot = 0; slot < slots; ++slot) {
    if (geo.link_towards[slot] < 0) continue;
    long long key = static_cast<long long>(geo.link_towards[slot]) * 2 + (geo.link_forward[slot] ? 0 : 1);
    auto it = load.find(key);
    double v = it == load.end() ? 0 : it->second;
    size_t cls = slot % (2 * D);
    if (lo[cls] < 0 || v < lo[cls]) lo[cls] = v;
    if (hi[cls] < 0 || v > hi[cls]) hi[cls] = v;
  }
  for (size_t cls = 0; cls < 2 * D; ++cls)
    if (hi[cls] - lo[cls] > 1e-9 * hi[cls]) return;
  std::unordered_map<long long, double> kept;
  for (size_t d = 0; d < D; ++d) {
    int c = 0;
    do {
      for (int dir = 0; dir < 2; ++dir) {
        size_t slot = (static_cast<size_t>(c) * D + d) * 2 + dir;
        if (geo.link_towards[slot] < 0) continue;
        long long key = static_cast<long long>(geo.link_towards[slot]) * 2 + (geo.link_forward[slot] ? 0 : 1);
        auto it = load.find(key);
        if (it != load.end()) kept[key] = it->second;
      }
      c = geo.next_chip[(static_cast<size_t>(c) * D + d) * 2];
    } while (c > 0);
  }
  load = std::move(kept);
}

}  // namespace

plan::CommPhase torus_all_to_all(const Topology& topo, const TorusGeometry& geo,
                                 const std::vector<int>& group, double bytes_per_rank) {
  plan::CommPhase phase;
  const int n = static_cast<int>(group.size());
  if (n < 2) return phase;
  const double per_pair = bytes_per_rank / n;
  std::map<int, int> ranks_on;
  for (int d : group) ranks_on[geo.chip_of(d)]++;
  // On chip: each rank sends per_pair to every other rank of its chip.
  int most = 0;
  for (const auto& [chip, count] : ranks_on) most = std::max(most, count);
  double on_chip = (most - 1) * per_pair / geo.core_bandwidth;

  std::unordered_map<long long, double> load;  // link * 2 + (forward ? 0 : 1) -> bytes
  int max_hops = 0;
  topology::Route route;
  const int chips = geo.chips();
  bool whole = static_cast<int>(ranks_on.size()) == chips;
  for (const auto& [chip, count] : ranks_on) whole &= count == ranks_on.begin()->second;
  if (whole && geo.translation_symmetric()) {
    // Every chip sees the same routes shifted, so every link of one dimension and direction carries the
    // same load: (routes from chip 0) x (chips) / (links of that class = chips).
    int m = ranks_on.begin()->second;
    const size_t D = geo.dims.size();
    std::vector<double> per_class(2 * D, 0);
    for (int t = 1; t < chips; ++t) {
      route.clear();
      geo.route(0, t, route);
      max_hops = std::max(max_hops, static_cast<int>(route.size()));
      for (const auto& hop : route) {
        // Which dimension and direction: find it from chip 0's slots (links are numbered per chip).
        const auto& l = topo.links[hop.link];
        int from = hop.forward ? l.a : l.b;
        for (size_t d = 0; d < D; ++d)
          for (int dir = 0; dir < 2; ++dir) {
            size_t slot = (static_cast<size_t>(from) * D + d) * 2 + dir;
            if (geo.link_towards[slot] == hop.link && (geo.link_forward[slot] != 0) == hop.forward)
              per_class[2 * d + dir] += static_cast<double>(m) * m * per_pair;
          }
      }
    }
    for (int c = 0; c < chips; ++c)
      for (size_t d = 0; d < D; ++d)
        for (int dir = 0; dir < 2; ++dir) {
          size_t slot = (static_cast<size_t>(c) * D + d) * 2 + dir;
          if (per_class[2 * d + dir] > 0 && geo.link_towards[slot] >= 0)
            load[static_cast<long long>(geo.link_towards[slot]) * 2 + (geo.link_forward[slot] ? 0 : 1)] =
                per_class[2 * d + dir];
        }
  } else {
    for (const auto& [a, ma] : ranks_on)
      for (const auto& [b, mb] : ranks_on) {
        if (a == b) continue;
        route.clear();
        geo.route(a, b, route);
        max_hops = std::max(max_hops, static_cast<int>(route.size()));
        for (const auto& hop : route)
          load[static_cast<long long>(hop.link) * 2 + (hop.forward ? 0 : 1)] +=
              static_cast<double>(ma) * mb * per_pair;
      }
  }
  keep_one_walk_per_dimension_if_uniform(geo, load);
  std::vector<std::pair<long long, double>> ordered(load.begin(), load.end());
  std::sort(ordered.begin(), ordered.end());
  double hop_latency = 0;
  for (const auto& [key, bytes] : ordered) {
    const auto& l = topo.links[key / 2];
    bool forward = key % 2 == 0;
    int from = forward ? l.a : l.b, to = forward ? l.b : l.a;
    phase.flows.push_back({from * geo.cores_per_chip, to * geo.cores_per_chip, bytes});
    hop_latency = std::max(hop_latency, l.latency);
  }
  phase.latency =
      topo.fabric_profile.launch_latency + ici_step(topo) + on_chip + std::max(0, max_hops - 1) * hop_latency;
  return phase;
}

plan::CommPlan plan_torus_collective(const Topology& topo, const TorusGeometry& geo, const Collective& c) {
  if (c.group.size() < 2 || c.bytes <= 0) return {};
  Box box = box_of(geo, c.group);
  // A broadcast runs as a scatter from the root followed by an all-gather (van de Geijn), along the same
  // dimension rings and with the same bytes per link as an all_reduce's reduce-scatter + all-gather: one
  // pass round a 2048-rank ring step by step would pay 2047 step latencies.
  bool rings =
      !box.axes.empty() && (c.kind == CollectiveKind::all_reduce || c.kind == CollectiveKind::broadcast ||
                            c.kind == CollectiveKind::reduce_scatter || c.kind == CollectiveKind::all_gather);
  plan::CommPlan plan;
  if (c.kind == CollectiveKind::all_to_all) {
    plan = {torus_all_to_all(topo, geo, c.group, c.bytes)};
  } else if (rings) {
    auto phases = scatter_phases(topo, geo, box, c.bytes);
    if (c.kind != CollectiveKind::all_gather) plan.insert(plan.end(), phases.begin(), phases.end());
    if (c.kind != CollectiveKind::reduce_scatter) plan.insert(plan.end(), phases.rbegin(), phases.rend());
    if (!plan.empty()) plan.front().latency += topo.fabric_profile.launch_latency;
  } else {
    plan = plan_collective_generic(topo, c);
    cost_on_chip_flows(geo, plan);
  }
  return plan;
}

}  // namespace podsim::network
