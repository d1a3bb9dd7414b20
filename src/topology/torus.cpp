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
#include <array>
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

// One way to walk a short (twisted) dimension: direction and hop count.
struct Leg {
  int dir = 1;
  int hops = 0;
};

class TorusRouter final : public Router {
 public:
  explicit TorusRouter(std::shared_ptr<const TorusGeometry> g) : geo(std::move(g)) {}
  std::shared_ptr<const TorusGeometry> geo;  // the topology's family data

  void route(int src_vertex, int dst_vertex, Route& out) const override {
    geo->route(src_vertex, dst_vertex, out);  // vertex id == chip index; cores of one chip: no link
  }

  std::string describe() const override {
    return geo->twisted ? "dimension order on a twisted torus (direction and laps of the short dimensions "
                          "chosen for the fewest hops)"
                        : "dimension order (x, y, z), shortest way round each ring";
  }
};

using Coords = std::array<int, 3>;

Coords to_coords(const TorusGeometry& g, int chip) {
  Coords c{0, 0, 0};
  for (size_t d = 0; d < g.dims.size(); ++d) c[d] = chip % g.dims[d], chip /= g.dims[d];
  return c;
}

Leg straight(const TorusGeometry& g, int s, int t, int d) {
  int n = g.dims[d];
  if (!g.wraparound[d]) return {t >= s ? 1 : -1, std::abs(t - s)};
  int up = ((t - s) % n + n) % n;
  return up <= n - up ? Leg{1, up} : Leg{-1, n - up};
}

// Hops per dimension of the twisted router's choice for the short dimensions (the long ones are walked
// from wherever the twists left the path). Tries each direction with and without one extra lap.
void plan_twisted(const TorusGeometry& g, const Coords& s, const Coords& t, std::array<Leg, 3>& legs) {
  const int D = static_cast<int>(g.dims.size());
  struct Option {
    Leg leg;
    int wraps;
  };
  std::array<std::array<Option, 4>, 3> options{};
  std::array<int, 3> shorts{};
  int count = 0;
  for (int d = 0; d < D; ++d) {
    bool is_short = false;
    for (int e = 0; e < D; ++e) is_short |= g.twist[d][e] != 0;
    if (!is_short) continue;
    int n = g.dims[d], up = ((t[d] - s[d]) % n + n) % n, down = (n - up) % n;
    for (int lap = 0; lap < 2; ++lap) {
      int h = up + lap * n;
      options[count][2 * lap] = {{+1, h}, (s[d] + h) / n};
      h = down + lap * n;
      options[count][2 * lap + 1] = {{-1, h}, -((n - 1 - s[d] + h) / n)};
    }
    shorts[count++] = d;
  }
  int best = INT_MAX, combos = 1;
  for (int i = 0; i < count; ++i) combos *= 4;
  for (int combo = 0; combo < combos; ++combo) {
    Coords pos = s;
    int cost = 0;
    bool is_short[3] = {false, false, false};
    for (int i = 0, code = combo; i < count; ++i, code /= 4) {
      const Option& o = options[i][code % 4];
      int d = shorts[i];
      is_short[d] = true;
      cost += o.leg.hops;
      for (int e = 0; e < D; ++e)
        if (g.twist[d][e]) pos[e] = ((pos[e] + o.wraps * g.twist[d][e]) % g.dims[e] + g.dims[e]) % g.dims[e];
    }
    for (int e = 0; e < D; ++e)
      if (!is_short[e]) cost += straight(g, pos[e], t[e], e).hops;
    if (cost < best) {
      best = cost;
      for (int i = 0, code = combo; i < count; ++i, code /= 4) legs[shorts[i]] = options[i][code % 4].leg;
    }
  }
}

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
  Coords c = to_coords(*this, chip);
  int n = dims[d];
  int next = c[d] + dir;
  if (next < 0 || next >= n) {
    if (!wraparound[d]) return -1;
    next = (next + n) % n;
    if (twisted)
      for (size_t e = 0; e < dims.size(); ++e)
        if (twist[d][e]) c[e] = ((c[e] + dir * twist[d][e]) % dims[e] + dims[e]) % dims[e];
  }
  c[d] = next;
  int id = 0;
  for (size_t e = dims.size(); e-- > 0;) id = id * dims[e] + c[e];
  return id;
}

void TorusGeometry::route(int from, int to, Route& out) const {
  if (from == to) return;
  const int D = static_cast<int>(dims.size());
  Coords s = to_coords(*this, from), t = to_coords(*this, to);
  std::array<Leg, 3> legs{};
  bool planned[3] = {false, false, false};
  if (twisted) {
    plan_twisted(*this, s, t, legs);
    for (int d = 0; d < D; ++d)
      for (int e = 0; e < D; ++e) planned[d] |= twist[d][e] != 0;
  }
  int at = from;
  Coords pos = s;
  for (int d = 0; d < D; ++d) {
    Leg leg = planned[d] ? legs[d] : straight(*this, pos[d], t[d], d);
    for (int h = 0; h < leg.hops; ++h) {
      size_t slot = (static_cast<size_t>(at) * D + d) * 2 + (leg.dir > 0 ? 0 : 1);
      out.push_back({link_towards[slot], link_forward[slot] != 0});
      at = next_chip[slot];
    }
    pos = to_coords(*this, at);
  }
}

bool TorusGeometry::translation_symmetric() const {
  if (twisted) return false;
  for (size_t d = 0; d < dims.size(); ++d)
    if (dims[d] > 1 && !wraparound[d]) return false;
  return true;
}

namespace {

// What the YAML says about a torus slice, before anything is built.
struct TorusSpec {
  std::vector<int> pod, dims;
  std::string pod_text;
  bool wrap = true, twisted = false;
  std::string chip_name;
  int cores = 0;
  double core_bw = 0;
  int links_per_chip = 0;
  double link_bw = 0, link_lat = 0;
};

// `pod_dims`, `slice_multiple` and `dims`: the slice must fit the pod and be built from whole blocks.
void read_slice(const ConfigNode& root, TorusSpec& spec) {
  std::vector<int>& pod = spec.pod;
  for (const ConfigNode& n : root.list("pod_dims")) {
    double v = n.as_number();
    if (v < 1 || v != static_cast<int>(v)) n.fail({}, "a pod dimension is a whole number of chips >= 1");
    pod.push_back(static_cast<int>(v));
  }
  if (pod.size() != 2 && pod.size() != 3) root.fail("pod_dims", "a torus has 2 or 3 dimensions");
  int multiple = static_cast<int>(root.positive_integer_or("slice_multiple", 1));
  std::vector<int>& dims = spec.dims;
  std::vector<ConfigNode> dim_nodes = root.list("dims");
  spec.pod_text = shape_text(pod);
  if (dim_nodes.size() != pod.size())
    root.fail("dims", fmt::format("this pod is a {}D torus of {} chips; give {} dimensions, e.g. [{}]",
                                  pod.size(), spec.pod_text, pod.size(), fmt::join(pod, ", ")));
  for (size_t d = 0; d < dim_nodes.size(); ++d) {
    double v = dim_nodes[d].as_number();
    if (v < 1 || v != static_cast<int>(v))
      root.fail("dims", fmt::format("dimension {} is {}; a dimension is a whole number of chips >= 1", d, v));
    dims.push_back(static_cast<int>(v));
  }
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] > pod[d])
      root.fail("dims", fmt::format("{} does not fit the pod of {} chips: dimension {} is {} but at most {}",
                                    shape_text(dims), spec.pod_text, d, dims[d], pod[d]));
    if (dims[d] % multiple) {
      std::vector<int> valid;
      for (int k = multiple; k <= pod[d]; k += multiple) valid.push_back(k);
      root.fail("dims",
                fmt::format("dimension {} is {}; slices of this pod are built from blocks of {} chips "
                            "per dimension, so every dimension must be a multiple of {} (valid: {})",
                            d, dims[d], multiple, multiple, fmt::join(valid, ", ")));
    }
  }
  spec.wrap = root.boolean_or("wraparound", true);
  spec.twisted = root.boolean_or("twisted", false);
}

// The `chip` block: how many devices (cores) share one ICI router, and how fast they talk on-chip.
void read_chip(const ConfigNode& root, TorusSpec& spec) {
  ConfigNode chip = root.child("chip");
  spec.chip_name = chip.string("name");
  spec.cores = static_cast<int>(chip.positive_integer("cores"));
  spec.core_bw = chip.positive("core_bandwidth_GBps") * 1e9;
  chip.reject_unknown_keys();
}

// The `ici` block: one link per direction of each dimension, so the count must match the slice.
void read_ici(const ConfigNode& root, TorusSpec& spec) {
  ConfigNode ici = root.child("ici");
  spec.links_per_chip = static_cast<int>(ici.positive_integer("links_per_chip"));
  if (spec.links_per_chip != 2 * static_cast<int>(spec.dims.size()))
    ici.fail("links_per_chip",
             fmt::format("a chip of a {}D torus has {} ICI links (one per direction of each "
                         "dimension), not {}",
                         spec.dims.size(), 2 * spec.dims.size(), spec.links_per_chip));
  spec.link_bw = ici.positive("bandwidth_GBps") * 1e9;
  spec.link_lat = ici.non_negative_or("latency_us", 1.0) * 1e-6;
  ici.reject_unknown_keys();
}

// Wraparound per dimension and, on a twisted torus, how far each short wraparound shifts the long ones.
void set_wraparound_and_twist(const ConfigNode& root, const TorusSpec& spec, TorusGeometry& geo) {
  const std::vector<int>& dims = spec.dims;
  const int D = static_cast<int>(dims.size());
  for (int d = 0; d < D; ++d) geo.wraparound.push_back(spec.wrap && dims[d] > 2);
  geo.twist.assign(D, std::vector<int>(D, 0));
  if (!spec.twisted) return;
  // k x k x 2k: both short wraparounds shift z by k. k x 2k x 2k: the x wraparound shifts y and z by k.
  bool ascending = std::is_sorted(dims.begin(), dims.end());
  int k = dims[0];
  bool kk2k = D == 3 && ascending && dims[1] == k && dims[2] == 2 * k;
  bool k2k2k = D == 3 && ascending && dims[1] == 2 * k && dims[2] == 2 * k;
  bool k2k = D == 2 && ascending && dims[1] == 2 * k;
  if (!spec.wrap || !(kk2k || k2k2k || k2k))
    root.fail("twisted", fmt::format("a twisted torus needs wraparound and a slice of shape k x k x 2k or "
                                     "k x 2k x 2k (ISCA'23: 2A=2B=C or 2A=B=C), e.g. [4, 4, 8] or [4, 8, 8]; "
                                     "{} is not one",
                                     shape_text(dims)));
  if (kk2k) geo.twist[0][2] = geo.twist[1][2] = k;
  if (k2k2k) geo.twist[0][1] = geo.twist[0][2] = k;
  if (k2k) geo.twist[0][1] = k;
  geo.twisted = true;
}

// One vertex per chip (vertex id == chip index), one ICI link per chip and dimension towards +1, recorded
// in both directions' slots so the router can walk either way without a search.
void add_chips_and_links(Topology& topo, const TorusSpec& spec, TorusGeometry& geo) {
  const int chips = geo.chips();
  const int D = static_cast<int>(geo.dims.size());
  for (int c = 0; c < chips; ++c) {
    std::vector<int> xyz = geo.coords(c);
    topo.add_vertex({VertexKind::device, fmt::format("chip({})", fmt::join(xyz, ",")), "chip", c});
  }
  geo.link_towards.assign(static_cast<size_t>(chips) * D * 2, -1);
  geo.link_forward.assign(geo.link_towards.size(), 0);
  geo.next_chip.assign(geo.link_towards.size(), -1);
  for (int c = 0; c < chips; ++c)
    for (int d = 0; d < D; ++d) {
      int next = geo.neighbour(c, d, +1);
      if (next < 0 || next == c) continue;
      int link = topo.add_link(c, next, spec.link_bw, spec.link_lat, LinkClass::ici);
      geo.link_towards[(static_cast<size_t>(c) * D + d) * 2] = link;
      geo.link_forward[(static_cast<size_t>(c) * D + d) * 2] = 1;
      geo.next_chip[(static_cast<size_t>(c) * D + d) * 2] = next;
      geo.next_chip[(static_cast<size_t>(next) * D + d) * 2 + 1] = c;
      geo.link_towards[(static_cast<size_t>(next) * D + d) * 2 + 1] = link;
      geo.link_forward[(static_cast<size_t>(next) * D + d) * 2 + 1] = 0;
    }
  for (int c = 0; c < chips; ++c)
    for (int k = 0; k < spec.cores; ++k) topo.device_vertex.push_back(c);
}

// The lines `podsim topo describe` prints for this family.
void describe_torus(Topology& topo, const TorusSpec& spec, const TorusGeometry& geo) {
  const std::vector<int>& dims = spec.dims;
  const int D = static_cast<int>(dims.size());
  const int chips = geo.chips(), cores = spec.cores;
  std::string wraps;
  for (int d = 0; d < D; ++d)
    wraps += geo.wraparound[d] ? "ring" : dims[d] > 1 ? "line" : "-", wraps += d + 1 < D ? " x " : "";
  topo.facts = {
      {"chips",
       fmt::format("{} {} chips as a {} {}{} (pod: {}), {} core{} each = {} devices", chips, spec.chip_name,
                   shape_text(dims), D == 2 ? "2D" : "3D", spec.twisted ? " twisted torus" : " torus",
                   spec.pod_text, cores, cores == 1 ? "" : "s", chips * cores)},
      {"dimensions", wraps},
      {"ICI", fmt::format("{} links per chip at {:.0f} GB/s per direction, {:.1f} us per hop",
                          spec.links_per_chip, spec.link_bw / 1e9, spec.link_lat * 1e6)},
      {"on-chip", cores > 1 ? fmt::format("{} cores share the chip's ICI router; {:.0f} GB/s between them "
                                          "(closed form)",
                                          cores, spec.core_bw / 1e9)
                            : std::string("one device per chip")},
  };
}

}  // namespace

Topology build_torus(const ConfigNode& root, const std::string& base_dir) {
  Topology topo;
  topo.name = read_document_name(root);

  TorusSpec spec;
  read_slice(root, spec);
  read_chip(root, spec);
  topo.device = read_device_spec(root.child("device"), base_dir);
  topo.device_profile = calibration::load_device_profile(topo.device.profile_path);
  read_ici(root, spec);

  TorusGeometry geo;
  geo.dims = spec.dims;
  geo.cores_per_chip = spec.cores;
  geo.core_bandwidth = spec.core_bw;
  geo.link_bandwidth = spec.link_bw;
  set_wraparound_and_twist(root, spec, geo);

  const int chips = geo.chips();
  if (chips < 2) root.fail("dims", "a torus needs at least 2 chips");
  if (spec.cores > 1 &&
      chips % 2)  // halves of the devices by rank must not split a chip (bisection, placement)
    root.fail("dims", fmt::format("{} has an odd number of chips ({}); with {} cores per chip use an even "
                                  "number of chips",
                                  shape_text(spec.dims), chips, spec.cores));
  add_chips_and_links(topo, spec, geo);
  topo.nodes = chips;
  topo.devices_per_node = spec.cores;
  describe_torus(topo, spec, geo);
  auto geometry = std::make_shared<const TorusGeometry>(std::move(geo));
  topo.set_family(geometry);
  topo.set_router(std::make_unique<TorusRouter>(geometry));
  apply_fabric_profile(topo, root, base_dir);
  return topo;
}

}  // namespace podsim::topology
