#include "podsim/fit/collective_geometry.hpp"

#include <fmt/format.h>

#include "podsim/core/error.hpp"
#include "podsim/network/link_load.hpp"

namespace podsim::fit {
namespace {

using topology::LinkClass;
using topology::Topology;

Topology with_profile(const Topology& topo, const calibration::FabricProfile& profile) {
  Topology t = topo;
  t.fabric_profile = profile;
  // The fit calibrates the one-protocol model (launch + steps x step latency, full bandwidth): a profile's
  // `protocols:` table (NCCL's LL / LL128 / Simple) is not what it fits, so it plans without it.
  t.fabric_profile.protocols.clear();
  for (auto& link : t.links) link.efficiency = profile.efficiency(topology::to_string(link.cls));
  return t;
}

const LinkClass kClasses[] = {LinkClass::nvlink,   LinkClass::pcie, LinkClass::infiniband,
                              LinkClass::ethernet, LinkClass::ici,  LinkClass::wafer_mesh,
                              LinkClass::fabric};

}  // namespace

network::Collective measured_collective(const Topology& topo, const calibration::NcclTestsLog& log) {
  network::Collective c;
  try {
    c.kind = network::parse_collective(log.op);
  } catch (const std::invalid_argument& e) {
    throw InputError(fmt::format("{}:{}: {}", log.file, log.first_line, e.what()));
  }
  c.algorithm =
      c.kind == network::CollectiveKind::all_to_all ? network::Algorithm::direct : network::Algorithm::ring;
  if (log.nodes < 1 || log.ranks % log.nodes != 0)
    throw InputError(
        fmt::format("{}:{}: {} ranks on {} hosts is not the same number on every host; podsim "
                    "places the same number of ranks on each server",
                    log.file, log.first_line, log.ranks, log.nodes));
  int per_node = log.ranks / log.nodes;
  if (per_node > topo.devices_per_node)
    throw InputError(
        fmt::format("{}:{}: {} ranks per host, but a server of {} has {} devices: is --topology "
                    "the machine the log was measured on?",
                    log.file, log.first_line, per_node, topo.name, topo.devices_per_node));
  if (log.nodes > topo.nodes)
    throw InputError(
        fmt::format("{}:{}: the log spans {} hosts but the topology has {} servers; add --set "
                    "topology.nodes={}",
                    log.file, log.first_line, log.nodes, topo.nodes, log.nodes));
  for (int node = 0; node < log.nodes; ++node)
    for (int local = 0; local < per_node; ++local) c.group.push_back(node * topo.devices_per_node + local);
  // sendrecv_perf sends around a ring of all ranks; its slowest hop crosses servers when there are several.
  if (c.kind == network::CollectiveKind::send_recv)
    c.group = {c.group[0], log.nodes > 1 ? topo.devices_per_node : c.group[1 % c.group.size()]};
  return c;
}

calibration::CollectiveGeometry collective_geometry(const Topology& topo, network::Collective c) {
  calibration::CollectiveGeometry g;
  int n = static_cast<int>(c.group.size());
  g.bus_factor = network::bus_factor(c.kind, n);
  if (n < 2) return g;

  // Bandwidth: every link at 100% efficiency, no software latency.
  calibration::FabricProfile ideal;
  ideal.launch_latency = 0;
  c.bytes = 1e9;
  auto transfer_with = [&](const calibration::FabricProfile& profile, double* wire) {
    Topology t = with_profile(topo, profile);
    double transfer = 0;
    for (const auto& phase : network::plan_collective(t, c)) {
      auto cost = network::idle_phase_cost(t, phase);
      transfer += cost.transfer;
      if (wire) *wire += cost.wire_latency;
    }
    return transfer;
  };
  double transfer = transfer_with(ideal, &g.wire_latency);
  // The bounding class: the one whose slowdown slows the collective. Where links of several classes tie
  // (a DGX's GPU-NIC PCIe path and its InfiniBand port carry the same bytes at the same rate), name the
  // inter-server class, then NVLink, then PCIe: the one people quote busbw against.
  int best_rank = -1;
  for (LinkClass cls : kClasses) {
    calibration::FabricProfile slower = ideal;
    slower.link_efficiency[topology::to_string(cls)] = 0.5;
    if (transfer_with(slower, nullptr) <= transfer * (1 + 1e-9)) continue;
    int rank = topology::is_inter_node(cls) ? 2 : cls == LinkClass::pcie ? 0 : 1;
    if (rank > best_rank) best_rank = rank, g.bandwidth_class = topology::to_string(cls);
  }
  if (transfer > 0) g.ideal_busbw = g.bus_factor * c.bytes / transfer;

  // Steps: with a step latency of 1 s on one link class and none elsewhere, the plan's software latency
  // counts the steps that cross that class. The class that pays is the slowest one crossed: inter-server
  // links before PCIe before NVLink (their step latencies are ordered that way on every real machine).
  auto steps_over = [&](LinkClass cls) {
    calibration::FabricProfile probe;
    probe.launch_latency = 0;
    probe.step_latency[topology::to_string(cls)] = 1;
    Topology tp = with_profile(topo, probe);
    double steps = 0;
    for (const auto& phase : network::plan_collective(tp, c)) steps += phase.latency;
    return steps;
  };
  best_rank = -1;
  std::vector<std::string> crossed;
  for (LinkClass cls : kClasses) {
    double steps = steps_over(cls);
    if (steps <= 0) continue;
    crossed.push_back(topology::to_string(cls));
    int rank = topology::is_inter_node(cls) ? 2 : cls == LinkClass::pcie ? 1 : 0;
    if (rank > best_rank) {
      best_rank = rank;
      g.steps = steps;
      g.latency_class = topology::to_string(cls);
    }
  }
  for (const auto& cls : crossed)
    if (cls != g.latency_class) g.other_classes.push_back(cls);
  return g;
}

double predicted_collective_time(const Topology& topo, const calibration::FabricProfile& profile,
                                 network::Collective c) {
  Topology t = with_profile(topo, profile);
  return network::idle_plan_time(t, network::plan_collective(t, c));
}

}  // namespace podsim::fit
