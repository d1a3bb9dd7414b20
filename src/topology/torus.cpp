// kind: torus — TPU pods: chips on a 2D (TPU v3) or 3D (TPU v4) torus of ICI links.
//
// Model (documented in docs/tpu-moe.md):
// - A chip is one vertex; its cores are the devices and all map to that vertex (device = chip * cores +
//   core). The cores of a chip share the chip's ICI router, so traffic between two cores of one chip never
//   touches a link: collectives cost it in closed form at `chip.core_bandwidth_GBps`.
// - Every chip has one full-duplex ICI link to its neighbour in each direction of each dimension; a ring
//   closes (wraparound) when the dimension has more than two chips and `wraparound` is on.
// - Twisted tori (TPU v4 slices of shape k x k x 2k or k x 2k x 2k, Jouppi et al. ISCA'23 Sec. 2): the
//   wraparound links of the short dimensions land half-way round the long dimension(s), as in Camara et
//   al., "Twisted torus topologies for enhanced interconnection networks" (IEEE TPDS 2010).
// - Routing: dimension order (x, then y, then z), the shortest way round each ring (ties go the positive
//   way). On a twisted torus the router also chooses, per short dimension, the direction and whether to go
//   once round the ring, whichever gives the fewest hops after the twist; check_routes verifies against BFS.
#include "podsim/topology/torus.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <climits>
#include <numeric>

#include "podsim/core/config_node.hpp"
#include "podsim/core/error.hpp"
#include "podsim/topology/families.hpp"
#include "podsim/topology/loader.hpp"

namespace podsim::topology {
namespace {

std::string shape_text(const std::vector<int>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s;
}

int ring_distance(int from, int to, int n, bool wrap) {
  if (!wrap) return std::abs(to - from);
  int forward = ((to - from) % n + n) % n;
  return std::min(forward, n - forward);
}

// One way to walk a short (twisted) dimension: direction and hop count.
struct Leg {
  int dir = 1;
  int hops = 0;
};

class TorusRouter final : public Router {
 public:
  explicit TorusRouter(TorusGeometry g) : geo(std::move(g)) {}
  TorusGeometry geo;

  // The legs the router takes from `from` to `to`, one per dimension, in dimension order.
  std::vector<Leg> plan(int from, int to) const {
    const int D = static_cast<int>(geo.dims.size());
    std::vector<int> s = geo.coords(from), t = geo.coords(to);
    std::vector<Leg> legs(D);
    if (!geo.twisted) {
      for (int d = 0; d < D; ++d) legs[d] = straight(s[d], t[d], d);
      return legs;
    }
    // Short (twisted) dimensions: try each direction, with and without one extra lap; the twist of every
    // wraparound crossed moves the long coordinates, whose remaining ring distance completes the cost.
    std::vector<int> shorts;
    for (int d = 0; d < D; ++d)
      if (std::any_of(geo.twist[d].begin(), geo.twist[d].end(), [](int v) { return v != 0; }))
        shorts.push_back(d);
    std::vector<std::vector<std::pair<Leg, int>>> options(shorts.size());  // (leg, wraps crossed, signed)
    for (size_t i = 0; i < shorts.size(); ++i) {
      int d = shorts[i], n = geo.dims[d];
      int up = ((t[d] - s[d]) % n + n) % n, down = (n - up) % n;
      for (int lap = 0; lap < 2; ++lap) {
        int h = up + lap * n;
        options[i].push_back({{+1, h}, (s[d] + h) / n});
        h = down + lap * n;
        options[i].push_back({{-1, h}, -((n - 1 - s[d] + h) / n)});
      }
    }
    int best = INT_MAX;
    std::vector<size_t> choice(shorts.size(), 0), best_choice;
    while (true) {
      std::vector<int> pos = s;
      int cost = 0;
      for (size_t i = 0; i < shorts.size(); ++i) {
        const auto& [leg, wraps] = options[i][choice[i]];
        int d = shorts[i];
        cost += leg.hops;
        for (int e = 0; e < D; ++e)
          if (geo.twist[d][e])
            pos[e] = ((pos[e] + wraps * geo.twist[d][e]) % geo.dims[e] + geo.dims[e]) % geo.dims[e];
      }
      for (int e = 0; e < D; ++e)
        if (std::find(shorts.begin(), shorts.end(), e) == shorts.end())
          cost += ring_distance(pos[e], t[e], geo.dims[e], geo.wraparound[e]);
      if (cost < best) best = cost, best_choice = choice;
      size_t i = 0;
      while (i < choice.size() && ++choice[i] == options[i].size()) choice[i++] = 0;
      if (i == choice.size()) break;
    }
    for (size_t i = 0; i < shorts.size(); ++i) legs[shorts[i]] = options[i][best_choice[i]].first;
    return legs;  // long dimensions are filled in while walking, from the coordinates reached
  }

  Leg straight(int s, int t, int d) const {
    int n = geo.dims[d];
    if (!geo.wraparound[d]) return {t >= s ? 1 : -1, std::abs(t - s)};
    int up = ((t - s) % n + n) % n;
    return up <= n - up ? Leg{1, up} : Leg{-1, n - up};
  }

  template <typename Visit>
  void walk(int from, int to, Visit&& visit) const {
    const int D = static_cast<int>(geo.dims.size());
    std::vector<Leg> legs = plan(from, to);
    std::vector<int> t = geo.coords(to);
    int at = from;
    for (int d = 0; d < D; ++d) {
      Leg leg = legs[d];
      if (geo.twisted && leg.hops == 0) leg = straight(geo.coords(at)[d], t[d], d);
      for (int h = 0; h < leg.hops; ++h) {
        size_t slot = (static_cast<size_t>(at) * D + d) * 2 + (leg.dir > 0 ? 0 : 1);
        visit(geo.link_towards[slot], geo.link_forward[slot] != 0);
        at = geo.neighbour(at, d, leg.dir);
      }
    }
  }

  void route(int src_vertex, int dst_vertex, Route& out) const override {
    if (src_vertex == dst_vertex) return;  // two cores of one chip: on-chip, no link
    walk(src_vertex, dst_vertex, [&](int link, bool forward) { out.push_back({link, forward}); });
  }

  std::string describe() const override {
    return geo.twisted ? "dimension order on a twisted torus (direction and laps of the short dimensions "
                         "chosen for the fewest hops)"
                       : "dimension order (x, y, z), shortest way round each ring";
  }
};

}  // namespace

int TorusGeometry::chips() const {
  return std::accumulate(dims.begin(), dims.end(), 1, std::multiplies<int>());
}

std::vector<int> TorusGeometry::coords(int chip) const {
  std::vector<int> c(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) c[d] = chip % dims[d], chip /= dims[d];
  return c;
}

int TorusGeometry::chip_at(const std::vector<int>& c) const {
  int chip = 0;
  for (size_t d = dims.size(); d-- > 0;) chip = chip * dims[d] + c[d];
  return chip;
}

int TorusGeometry::neighbour(int chip, int d, int dir) const {
  std::vector<int> c = coords(chip);
  int n = dims[d];
  int next = c[d] + dir;
  if (next >= 0 && next < n) {
    c[d] = next;
    return chip_at(c);
  }
  if (!wraparound[d]) return -1;
  c[d] = (next + n) % n;
  if (twisted)
    for (size_t e = 0; e < dims.size(); ++e)
      if (twist[d][e]) c[e] = ((c[e] + dir * twist[d][e]) % dims[e] + dims[e]) % dims[e];
  return chip_at(c);
}

const TorusGeometry* torus_geometry(const Topology& topo) {
  const auto* router = dynamic_cast<const TorusRouter*>(&topo.router());
  return router ? &router->geo : nullptr;
}

Topology build_torus(const ConfigNode& root, const std::string& base_dir) {
  Topology topo;
  topo.name = root.string("name");
  root.string_or("description", "");
  if (root.has("sources")) root.list("sources");

  std::vector<int> pod;
  for (const ConfigNode& n : root.list("pod_dims")) {
    double v = n.as_number();
    if (v < 1 || v != static_cast<int>(v)) n.fail({}, "a pod dimension is a whole number of chips >= 1");
    pod.push_back(static_cast<int>(v));
  }
  if (pod.size() != 2 && pod.size() != 3) root.fail("pod_dims", "a torus has 2 or 3 dimensions");
  int multiple = static_cast<int>(root.positive_integer_or("slice_multiple", 1));
  std::vector<int> dims;
  std::vector<ConfigNode> dim_nodes = root.list("dims");
  std::string pod_text = shape_text(pod);
  if (dim_nodes.size() != pod.size())
    root.fail("dims", fmt::format("this pod is a {}D torus of {} chips; give {} dimensions, e.g. [{}]",
                                  pod.size(), pod_text, pod.size(), fmt::join(pod, ", ")));
  for (size_t d = 0; d < dim_nodes.size(); ++d) {
    double v = dim_nodes[d].as_number();
    if (v < 1 || v != static_cast<int>(v))
      root.fail("dims", fmt::format("dimension {} is {}; a dimension is a whole number of chips >= 1", d, v));
    dims.push_back(static_cast<int>(v));
  }
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] > pod[d])
      root.fail("dims", fmt::format("{} does not fit the pod of {} chips: dimension {} is {} but at most {}",
                                    shape_text(dims), pod_text, d, dims[d], pod[d]));
    if (dims[d] % multiple) {
      std::vector<int> valid;
      for (int k = multiple; k <= pod[d]; k += multiple) valid.push_back(k);
      root.fail("dims",
                fmt::format("dimension {} is {}; slices of this pod are built from blocks of {} chips "
                            "per dimension, so every dimension must be a multiple of {} (valid: {})",
                            d, dims[d], multiple, multiple, fmt::join(valid, ", ")));
    }
  }
  bool wrap = root.boolean_or("wraparound", true);
  bool twisted = root.boolean_or("twisted", false);

  ConfigNode chip = root.child("chip");
  std::string chip_name = chip.string("name");
  int cores = static_cast<int>(chip.positive_integer("cores"));
  double core_bw = chip.positive("core_bandwidth_GBps") * 1e9;
  chip.reject_unknown_keys();

  topo.device = read_device_spec(root.child("device"), base_dir);
  topo.device_profile = calibration::load_device_profile(topo.device.profile_path);

  ConfigNode ici = root.child("ici");
  int links_per_chip = static_cast<int>(ici.positive_integer("links_per_chip"));
  if (links_per_chip != 2 * static_cast<int>(dims.size()))
    ici.fail("links_per_chip",
             fmt::format("a chip of a {}D torus has {} ICI links (one per direction of each "
                         "dimension), not {}",
                         dims.size(), 2 * dims.size(), links_per_chip));
  double link_bw = ici.positive("bandwidth_GBps") * 1e9;
  double link_lat = ici.non_negative_or("latency_us", 1.0) * 1e-6;
  ici.reject_unknown_keys();

  TorusGeometry geo;
  geo.dims = dims;
  geo.cores_per_chip = cores;
  geo.core_bandwidth = core_bw;
  geo.link_bandwidth = link_bw;
  const int D = static_cast<int>(dims.size());
  for (int d = 0; d < D; ++d) geo.wraparound.push_back(wrap && dims[d] > 2);
  geo.twist.assign(D, std::vector<int>(D, 0));
  if (twisted) {
    // k x k x 2k: both short wraparounds shift z by k. k x 2k x 2k: the x wraparound shifts y and z by k.
    bool ascending = std::is_sorted(dims.begin(), dims.end());
    int k = dims[0];
    bool kk2k = D == 3 && ascending && dims[1] == k && dims[2] == 2 * k;
    bool k2k2k = D == 3 && ascending && dims[1] == 2 * k && dims[2] == 2 * k;
    bool k2k = D == 2 && ascending && dims[1] == 2 * k;
    if (!wrap || !(kk2k || k2k2k || k2k))
      root.fail("twisted",
                fmt::format("a twisted torus needs wraparound and a slice of shape k x k x 2k or "
                            "k x 2k x 2k (ISCA'23: 2A=2B=C or 2A=B=C), e.g. [4, 4, 8] or [4, 8, 8]; "
                            "{} is not one",
                            shape_text(dims)));
    if (kk2k) geo.twist[0][2] = geo.twist[1][2] = k;
    if (k2k2k) geo.twist[0][1] = geo.twist[0][2] = k;
    if (k2k) geo.twist[0][1] = k;
    geo.twisted = true;
  }

  const int chips = geo.chips();
  for (int c = 0; c < chips; ++c) {
    std::vector<int> xyz = geo.coords(c);
    topo.add_vertex({VertexKind::device, fmt::format("chip({})", fmt::join(xyz, ",")), "chip", c});
  }
  geo.link_towards.assign(static_cast<size_t>(chips) * D * 2, -1);
  geo.link_forward.assign(geo.link_towards.size(), 0);
  for (int c = 0; c < chips; ++c)
    for (int d = 0; d < D; ++d) {
      int next = geo.neighbour(c, d, +1);
      if (next < 0 || next == c) continue;
      int link = topo.add_link(c, next, link_bw, link_lat, LinkClass::ici);
      geo.link_towards[(static_cast<size_t>(c) * D + d) * 2] = link;
      geo.link_forward[(static_cast<size_t>(c) * D + d) * 2] = 1;
      geo.link_towards[(static_cast<size_t>(next) * D + d) * 2 + 1] = link;
      geo.link_forward[(static_cast<size_t>(next) * D + d) * 2 + 1] = 0;
    }
  for (int c = 0; c < chips; ++c)
    for (int k = 0; k < cores; ++k) topo.device_vertex.push_back(c);
  topo.nodes = chips;
  topo.devices_per_node = cores;

  std::string wraps;
  for (int d = 0; d < D; ++d)
    wraps += geo.wraparound[d] ? "ring" : dims[d] > 1 ? "line" : "-", wraps += d + 1 < D ? " x " : "";
  topo.facts = {
      {"chips",
       fmt::format("{} {} chips as a {} {}{} (pod: {}), {} core{} each = {} devices", chips, chip_name,
                   shape_text(dims), D == 2 ? "2D" : "3D", twisted ? " twisted torus" : " torus", pod_text,
                   cores, cores == 1 ? "" : "s", chips * cores)},
      {"dimensions", wraps},
      {"ICI", fmt::format("{} links per chip at {:.0f} GB/s per direction, {:.1f} us per hop", links_per_chip,
                          link_bw / 1e9, link_lat * 1e6)},
      {"on-chip", cores > 1 ? fmt::format("{} cores share the chip's ICI router; {:.0f} GB/s between them "
                                          "(closed form)",
                                          cores, core_bw / 1e9)
                            : std::string("one device per chip")},
  };
  topo.set_router(std::make_unique<TorusRouter>(std::move(geo)));
  apply_fabric_profile(topo, root, base_dir);
  return topo;
}

}  // namespace podsim::topology
