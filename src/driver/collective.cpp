#include "podsim/driver/collective.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>
#include <tuple>

#include "podsim/core/error.hpp"
#include "podsim/engine/replay.hpp"
#include "podsim/network/collective.hpp"
#include "podsim/network/collective_registry.hpp"
#include "podsim/network/link_load.hpp"
#include "podsim/plan/task_graph.hpp"
#include "podsim/topology/loader.hpp"
#include "podsim/topology/resize_hint.hpp"
#include "podsim/topology/torus.hpp"

namespace podsim::driver {
namespace {

// The ranks of the group: `per_node` on each server in order, as many servers as it takes.
std::vector<int> rank_devices(const topology::Topology& topo, int devices, int per_node) {
  std::vector<int> group;
  for (int i = 0; static_cast<int>(group.size()) < devices; ++i) {
    int node = i / per_node, local = i % per_node;
    if (node >= topo.nodes)
      throw InputError(fmt::format("--devices {}: only {} servers x {} ranks available; add {}", devices,
                                   topo.nodes, per_node, topology::resize_hint(topo)));
    group.push_back(node * topo.devices_per_node + local);
  }
  return group;
}

// The link class that bounds a plan: that of the phase moving the most data ("latency" when software
// latency outweighs the transfer).
std::string bounding_class(const topology::Topology& topo, const plan::CommPlan& plan) {
  if (plan.empty()) return "-";
  network::PhaseCost cost;
  for (const auto& phase : plan) {
    auto c = network::idle_phase_cost(topo, phase);
    if (c.transfer >= cost.transfer) cost = c;
  }
  std::string cls = "-";
  if (cost.bottleneck_link >= 0) cls = topology::to_string(topo.links[cost.bottleneck_link].cls);
  if (cost.transfer < cost.software) cls = "latency";
  return cls;
}

// An explicit protocol the fabric profile does not describe would silently run as Simple.
void check_protocol(const topology::Topology& topo, const network::Collective& c, const std::string& text) {
  if (c.protocol == network::Protocol::automatic || c.protocol == network::Protocol::simple) return;
  std::vector<network::Algorithm> asked = {c.algorithm};
  if (c.algorithm == network::Algorithm::automatic) asked = network::algorithms_for(c.kind);
  bool modelled = false;
  for (auto a : asked) modelled = modelled || network::protocol_modelled(topo, a, c.protocol);
  if (topo.family<topology::TorusGeometry>()) modelled = false;  // torus rings have one protocol
  if (modelled) return;
  std::string key = text;
  for (auto& ch : key) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  throw InputError(fmt::format(
      "--protocol {}: the fabric profile {} describes no {} protocol for {} {}; use auto or Simple, or add "
      "protocols.<ring|tree>.{} to the profile",
      text, topo.fabric_profile.file.empty() ? "(none)" : topo.fabric_profile.file,
      network::to_string(c.protocol), network::to_string(c.kind), network::to_string(c.algorithm), key));
}

// What runs at one size: auto resolved the way plan_collective resolves it.
std::pair<std::string, std::string> what_runs(const topology::Topology& topo, const network::Collective& c) {
  using K = network::CollectiveKind;
  if (c.kind == K::all_to_all) return {"direct", "Simple"};
  if (c.kind == K::send_recv) return {"point-to-point", "Simple"};
  if (topo.family<topology::TorusGeometry>()) return {"torus", "Simple"};
  network::CollectiveChoice choice{c.algorithm, c.protocol, 0};
  if (c.algorithm == network::Algorithm::automatic || c.protocol == network::Protocol::automatic)
    choice = network::select_collective(topo, c);
  // An algorithm that does not plan the kind runs the kind's default (planner_for).
  auto valid = network::algorithms_for(c.kind);
  if (std::find(valid.begin(), valid.end(), choice.algorithm) == valid.end())
    choice.algorithm = valid.front();
  bool modelled = network::protocol_modelled(topo, choice.algorithm, choice.protocol);
  return {network::to_string(choice.algorithm), modelled ? network::to_string(choice.protocol) : "Simple"};
}

}  // namespace

double parse_bytes(const std::string& text, const std::string& flag) {
  size_t pos = 0;
  double value = 0;
  try {
    value = std::stod(text, &pos);
  } catch (const std::exception&) {
    throw InputError(fmt::format("{} {}: expected a size such as 8, 64KB, 1MiB or 2GB", flag, text));
  }
  std::string unit = text.substr(pos);
  double scale = 1;
  if (unit.empty() || unit == "B")
    scale = 1;
  else if (unit == "KB")
    scale = 1e3;
  else if (unit == "MB")
    scale = 1e6;
  else if (unit == "GB")
    scale = 1e9;
  else if (unit == "KiB" || unit == "K")  // nccl-tests reads -b 1K as 1024
    scale = 1024.0;
  else if (unit == "MiB" || unit == "M")
    scale = 1024.0 * 1024;
  else if (unit == "GiB" || unit == "G")
    scale = 1024.0 * 1024 * 1024;
  else
    throw InputError(fmt::format(
        "{} {}: unknown unit '{}' (use B, KB, MB, GB (10^3..), K, M, G or KiB, MiB, GiB (2^10..))", flag,
        text, unit));
  if (!(value > 0) || !std::isfinite(value))
    throw InputError(fmt::format("{} {}: must be more than 0 bytes", flag, text));
  return value * scale;
}

// An --algorithm the collective does not have would silently run another one: an error instead.
void check_algorithm(const network::Collective& c, const std::string& asked) {
  if (c.algorithm == network::Algorithm::automatic) return;
  auto valid = network::algorithms_for(c.kind);
  if (std::find(valid.begin(), valid.end(), c.algorithm) != valid.end()) return;
  std::string names = "auto";
  for (auto a : valid) names += std::string(", ") + network::to_string(a);
  throw InputError(fmt::format("--algorithm {}: {} does not run {}; valid: {}", asked,
                               network::to_string(c.kind), asked, names));
}

CollectiveTiming time_collective(const CollectiveRequest& request) {
  auto topo = topology::load_topology(request.topology_file, request.topology_sets);
  network::Collective c;
  try {
    c.kind = network::parse_collective(request.op);
    c.algorithm = network::parse_algorithm(request.algorithm);
    c.protocol = network::parse_protocol(request.protocol);
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("--op/--algorithm/--protocol: ") + e.what());
  }
  check_protocol(topo, c, request.protocol);
  check_algorithm(c, request.algorithm);
  int devices = request.devices;
  // send_recv is one transfer between two ranks: any other count would be silently ignored.
  if (c.kind == network::CollectiveKind::send_recv) {
    if (request.devices_given && devices != 2)
      throw InputError(fmt::format(
          "--devices {}: send_recv is one transfer between exactly 2 ranks; use --devices 2 (the default "
          "for send_recv) and --per-node 1 to cross servers",
          devices));
    devices = 2;
  }
  if (devices < 2) throw InputError("--devices: a collective needs at least 2 ranks");
  if (request.per_node_given && request.per_node < 1)
    throw InputError(fmt::format(
        "--per-node {}: must be at least 1 rank per node; leave it out to fill each node", request.per_node));
  int per_node = request.per_node_given ? request.per_node : topo.devices_per_node;
  if (per_node > topo.devices_per_node)
    throw InputError(fmt::format("--per-node {}: a server of this topology has {} devices", per_node,
                                 topo.devices_per_node));
  c.group = rank_devices(topo, devices, per_node);
  double first = parse_bytes(request.bytes, "--bytes");
  double last = request.max_bytes.empty() ? first : parse_bytes(request.max_bytes, "--max-bytes");
  if (last < first)
    throw InputError(
        fmt::format("--max-bytes {}: below --bytes {}; the sweep doubles from --bytes up to "
                    "--max-bytes, so give --max-bytes at least {}",
                    request.max_bytes, request.bytes, request.bytes));
  std::vector<double> sizes;
  for (double s = first; s <= last * (1 + 1e-9); s *= 2) sizes.push_back(s);
  if (sizes.size() > 64) throw InputError("--max-bytes: at most 64 sizes per sweep");

  // One graph: the sizes run one after another, so a single replay times all of them.
  plan::TaskGraph graph;
  graph.stages = 1;
  graph.stage_devices = {c.group[0]};
  int stream = graph.add_stream("collective", 0, c.group[0]);
  std::vector<std::string> bound;
  std::vector<std::pair<std::string, std::string>> ran;
  for (double s : sizes) {
    c.bytes = s;
    ran.push_back(what_runs(topo, c));
    auto plan = network::plan_collective(topo, c);
    bound.push_back(bounding_class(topo, plan));
    int previous = static_cast<int>(graph.tasks.size()) - 1;
    std::vector<int> deps;
    if (previous >= 0) deps.push_back(previous);
    graph.add_comm(plan::TaskKind::none, stream, 0, graph.add_plan(std::move(plan)), plan::Category::tp,
                   std::move(deps));
  }
  auto result = engine::replay(topo, graph);
  CollectiveTiming timing;
  timing.kind = network::to_string(c.kind);
  // What actually runs: all_to_all and send_recv have one algorithm whatever --algorithm says.
  timing.algorithm = c.kind == network::CollectiveKind::all_to_all  ? "direct"
                     : c.kind == network::CollectiveKind::send_recv ? "point-to-point"
                                                                    : network::to_string(c.algorithm);
  timing.protocol = request.protocol;
  timing.topology_name = topo.name;
  timing.ranks = static_cast<int>(c.group.size());
  timing.per_node = per_node;
  for (size_t i = 0; i < sizes.size(); ++i) {
    CollectiveSize row;
    row.bytes = sizes[i];
    row.seconds = result.tasks[i].end - result.tasks[i].start;
    row.algbw_GBps = row.seconds > 0 ? sizes[i] / row.seconds / 1e9 : 0;
    row.busbw_GBps = row.algbw_GBps * network::bus_factor(c.kind, timing.ranks);
    row.bound_by = bound[i];
    std::tie(row.algorithm, row.protocol) = ran[i];
    timing.sizes.push_back(row);
  }
  return timing;
}

}  // namespace podsim::driver
