#include "podsim/driver/goodput_assessment.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "podsim/core/config_node.hpp"
#include "podsim/core/error.hpp"
#include "podsim/topology/loader.hpp"

namespace podsim::driver {

using reliability::FailureUnit;

std::vector<std::pair<FailureUnit, double>> job_component_units(const topology::Topology& topo,
                                                                int job_devices) {
  double nics = 0, switches = 0, links = 0;
  for (const auto& v : topo.vertices) {
    if (v.kind == topology::VertexKind::nic) ++nics;
    if (v.kind == topology::VertexKind::switch_ && v.node < 0) ++switches;  // fabric, not in-server
  }
  // Scale-out cables (NVLink / PCIe inside a host fail with the host). podsim bundles parallel cables into
  // one link of their summed bandwidth (and splits a tier's capacity over many thin links at scale), so
  // cables are counted as scale-out bandwidth in units of a NIC's own link: a bundled spine uplink of
  // 8 x 400 Gb/s counts 8. Without NICs (a switch-less fabric), in units of the slowest link.
  auto scale_out = [](const topology::Link& l) {
    return l.cls == topology::LinkClass::infiniband || l.cls == topology::LinkClass::ethernet ||
           l.cls == topology::LinkClass::fabric;
  };
  auto is_nic = [&](int v) { return topo.vertices[v].kind == topology::VertexKind::nic; };
  double nic_cable = 0, slowest = 0, capacity = 0;
  for (const auto& l : topo.links) {
    if (!scale_out(l)) continue;
    capacity += l.bandwidth;
    slowest = slowest == 0 ? l.bandwidth : std::min(slowest, l.bandwidth);
    if (is_nic(l.a) || is_nic(l.b)) nic_cable = std::max(nic_cable, l.bandwidth);
  }
  double cable = nic_cable > 0 ? nic_cable : slowest;
  if (cable > 0) links = std::round(capacity / cable);
  double share = static_cast<double>(job_devices) / std::max(1, topo.device_count());
  int per_node = std::max(1, topo.devices_per_node);
  double hosts = std::ceil(static_cast<double>(job_devices) / per_node);
  return {{FailureUnit::gpu, job_devices},
          {FailureUnit::host, hosts},
          {FailureUnit::nic, nics * share},
          {FailureUnit::switch_, switches * share},
          {FailureUnit::link, links * share}};
}

namespace {

double units_of(const std::vector<std::pair<FailureUnit, double>>& units, FailureUnit u) {
  for (const auto& [unit, n] : units)
    if (unit == u) return n;
  return 0;
}

// Seconds to move `bytes` through the slower of the storage tier and the hosts' own paths to it.
double transfer_seconds(double bytes, double tier, double per_node, double hosts) {
  double rate = per_node > 0 ? std::min(tier, per_node * hosts) : tier;
  return bytes / rate;
}

void checkpoint_costs(const report::RunResult& run, const reliability::ReliabilityProfile& p,
                      double hosts, GoodputAssessment& a) {
  a.checkpoint_bytes =
      p.checkpoint_bytes_override > 0 ? p.checkpoint_bytes_override : run.plan.model_state_bytes;
  if (a.checkpoint_bytes <= 0)
    throw InputError(fmt::format(
        "--goodput {}: the {} workload does not say how large its checkpoint is; give it as "
        "--set goodput.checkpoint.bytes=<bytes>",
        p.file, run.workload_kind));
  a.checkpoint_write_seconds =
      transfer_seconds(a.checkpoint_bytes, p.storage_write_bytes_per_s, p.node_write_bytes_per_s, hosts);
  a.restore_seconds =
      transfer_seconds(a.checkpoint_bytes, p.storage_read_bytes_per_s, p.node_write_bytes_per_s, hosts);
  // Async: every device copies its share of the state to host memory in parallel, then training resumes.
  double per_device = a.checkpoint_bytes / std::max(1, run.devices());
  a.checkpoint_blocking_seconds =
      p.async_checkpoint ? std::min(per_device / p.snapshot_bytes_per_s, a.checkpoint_write_seconds)
                         : a.checkpoint_write_seconds;
  a.restart_seconds = p.restart_seconds + a.restore_seconds;
}

void choose_interval(const reliability::ReliabilityProfile& p, GoodputAssessment& a) {
  double step = a.job.step_seconds;
  // An asynchronous write must finish before the next checkpoint starts.
  long long min_steps =
      p.async_checkpoint ? std::max(1LL, static_cast<long long>(std::ceil(a.checkpoint_write_seconds / step)))
                         : 1;
  a.optimum = reliability::optimal_goodput(a.job, min_steps);
  a.young_daly_interval_seconds = reliability::young_daly_interval_seconds(a.job);
  if (p.interval_minutes <= 0) {
    a.estimate = a.optimum;
    return;
  }
  long long steps = std::max(1LL, std::llround(p.interval_minutes * 60 / step));
  if (steps < min_steps)
    a.notes.push_back(fmt::format(
        "the checkpoint interval of {} min is shorter than an asynchronous write ({:.0f} s): each checkpoint "
        "waits for the previous one, so {} steps are used",
        p.interval_minutes, a.checkpoint_write_seconds, min_steps));
  a.estimate = reliability::goodput_at(a.job, std::max(steps, min_steps));
}

}  // namespace

GoodputAssessment assess_goodput(const report::RunResult& run, const topology::Topology& topo,
                                 const reliability::ReliabilityProfile& p) {
  if (!run.ok() || run.step_time() <= 0)
    throw InputError(fmt::format("--goodput: the run's status is {}; there is no step time to assess",
                                 run.status));
  GoodputAssessment a;
  a.profile_name = p.name;
  a.profile_file = p.file;
  auto units = job_component_units(topo, run.devices());
  for (const auto& c : p.failures) {
    ComponentShare s{c, units_of(units, c.per), 0};
    s.failures_per_hour = s.units / c.mtbf_hours;
    a.failures_per_hour += s.failures_per_hour;
    a.components.push_back(s);
  }
  checkpoint_costs(run, p, units_of(units, FailureUnit::host), a);
  a.job = {a.failures_per_hour / 3600, run.step_time(), a.checkpoint_blocking_seconds, a.restart_seconds};
  choose_interval(p, a);
  double work = std::max(a.estimate.interval_seconds * 50, 200 / std::max(a.job.failures_per_second, 1e-12));
  work = std::min(work, 1e9);
  a.monte_carlo = reliability::simulate_goodput(a.job, a.estimate.interval_steps, work, p.seed,
                                                p.monte_carlo_trials);
  a.train_tokens = p.train_tokens > 0 ? p.train_tokens : 1e12;
  double steps = run.plan.tokens_per_step > 0 ? a.train_tokens / run.plan.tokens_per_step : 0;
  a.ideal_train_seconds = steps * run.step_time();
  a.expected_train_seconds = a.estimate.fraction > 0 ? a.ideal_train_seconds / a.estimate.fraction : 0;
  if (units_of(units, FailureUnit::link) == 0)
    a.notes.push_back("the topology has no scale-out links: link failure rates count nothing");
  a.notes.push_back(
      "not modelled: failures during a restart, planned maintenance, slowdowns that are not failures "
      "(stragglers), spare nodes; each failure restarts the whole job from its last checkpoint");
  return a;
}

GoodputAssessment assess_goodput(const RunRequest& request, const report::RunResult& run,
                                 const reliability::ReliabilityProfile& profile) {
  Overrides topo_sets, work_sets;
  split_sets(request.sets, topo_sets, work_sets);
  return assess_goodput(run, topology::load_topology(request.topology_file, topo_sets), profile);
}

Overrides take_goodput_sets(std::vector<std::string>& sets) {
  Overrides out;
  std::vector<std::string> rest;
  for (const auto& s : sets) {
    auto [key, value] = split_assignment(s);
    if (key.rfind("goodput.", 0) == 0)
      out.emplace_back(key.substr(8), value);
    else
      rest.push_back(s);
  }
  sets = rest;
  return out;
}

}  // namespace podsim::driver
