#include "podsim/fit/fabric_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "podsim/core/error.hpp"
#include "podsim/fit/least_squares.hpp"

namespace podsim::calibration {
namespace {

std::string size_text(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) bytes /= 1024, ++u;
  return fmt::format("{:g} {}", bytes, units[u]);
}

// Hockney model t = alpha + bytes x bus_factor / busbw over the rows of one size range, fitted on
// relative error so that the 8-byte and the 8-GB rows count alike.
RangeFit fit_range(const std::vector<NcclTestsRow>& rows, const CollectiveGeometry& g) {
  RangeFit r;
  r.points = static_cast<int>(rows.size());
  r.summary.from_bytes = rows.front().bytes;
  r.summary.to_bytes = rows.back().bytes;
  for (const auto& row : rows)
    r.summary.peak_busbw = std::max(r.summary.peak_busbw, row.bytes * g.bus_factor / row.seconds);
  const auto& last = rows.back();
  if (rows.size() < 2) {
    // One size cannot separate latency from bandwidth: report the measurement as it is.
    r.summary.latency = last.seconds;
    r.summary.busbw = r.summary.peak_busbw;
    r.summary.bound_by = r.summary.peak_busbw > 0.5 * g.ideal_busbw ? g.bandwidth_class : "latency";
    return r;
  }
  std::vector<std::vector<double>> a;
  std::vector<double> b;
  for (const auto& row : rows) {
    a.push_back({1 / row.seconds, row.bytes * g.bus_factor / row.seconds});
    b.push_back(1);
  }
  auto fit = nonnegative_least_squares(a, b);
  double alpha = fit.x[0], inverse_bw = fit.x[1];
  r.summary.latency = alpha;
  r.summary.busbw = inverse_bw > 0 ? 1 / inverse_bw : 0;
  bool bandwidth_bound = last.bytes * g.bus_factor * inverse_bw > alpha;
  r.summary.bound_by = bandwidth_bound ? g.bandwidth_class : "latency";
  return r;
}

std::string join(const std::vector<std::string>& items, const char* sep = ", ") {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

// One log: its size ranges, large-message efficiency and small-message latency.
CollectiveFit fit_collective(const NcclTestsLog& log, const CollectiveGeometry& g,
                             const FabricFitOptions& options) {
  if (log.ranks < 2 || g.ideal_busbw <= 0)
    throw InputError(
        fmt::format("{}:{}: {} over {} rank(s) moves no data between devices; such a log "
                    "cannot calibrate a fabric",
                    log.file, log.first_line, log.op, log.ranks));
  CollectiveFit c;
  c.log = &log;
  c.geometry = g;
  size_t start = 0;
  for (size_t r = 0; r <= options.range_bounds.size() && start < log.rows.size(); ++r) {
    double upper = r < options.range_bounds.size() ? options.range_bounds[r] : INFINITY;
    size_t end = start;
    while (end < log.rows.size() && log.rows[end].bytes < upper) ++end;
    if (end == start) continue;
    c.ranges.push_back(fit_range({log.rows.begin() + start, log.rows.begin() + end}, g));
    start = end;
  }
  const RangeFit& first = c.ranges.front();
  if (first.points >= 2 && first.summary.from_bytes < options.range_bounds.front())
    c.latency = first.summary.latency;
  const RangeFit& large = c.ranges.back();
  if (large.points >= 2 && large.summary.bound_by != "latency" && large.summary.busbw > 0)
    c.efficiency = large.summary.busbw / g.ideal_busbw;
  return c;
}

// Bandwidth: one efficiency per link class, the mean over the logs that class bounds. Returns what was
// fitted, for the "fitted:" note.
std::vector<std::string> fit_link_efficiency(FabricFitResult& result, const FabricFitOptions& options) {
  FabricProfile& p = result.profile;
  std::map<std::string, std::vector<double>> per_class;
  for (const auto& c : result.collectives)
    if (c.efficiency > 0) per_class[c.geometry.bandwidth_class].push_back(c.efficiency);
  std::vector<std::string> fitted_bw;
  for (auto& [cls, values] : per_class) {
    double mean = 0;
    for (double v : values) mean += v / values.size();
    if (mean > 1) {
      result.notes.push_back(fmt::format(
          "{}: measured busbw is {:.0f}% of what the links allow at 100% efficiency; kept at 1.0. NVLink "
          "SHARP (NVLS) or in-network reduction is not modelled: calibrate with NCCL_NVLS_ENABLE=0 or "
          "NCCL_ALGO=Ring",
          cls, 100 * mean));
      mean = 1;
    }
    p.link_efficiency[cls] = mean;
    fitted_bw.push_back(
        fmt::format("link_efficiency.{} = {:.3f} (mean of {} log(s))", cls, mean, values.size()));
  }
  if (fitted_bw.empty())
    result.notes.push_back(
        "no log reaches a bandwidth-bound size range (>= " + size_text(options.range_bounds.back()) +
        " with time growing with size): link_efficiency kept from the base profile");
  return fitted_bw;
}

// The logs with a small-message latency, and the latency classes they pay steps on (in first-seen order,
// which is the order of the fitted unknowns).
struct LatencyLogs {
  std::vector<const CollectiveFit*> usable;
  std::vector<std::string> classes;
};

LatencyLogs latency_logs(const FabricFitResult& result) {
  LatencyLogs l;
  for (const auto& c : result.collectives)
    if (c.latency > 0) {
      l.usable.push_back(&c);
      if (std::find(l.classes.begin(), l.classes.end(), c.geometry.latency_class) == l.classes.end())
        l.classes.push_back(c.geometry.latency_class);
    }
  return l;
}

// Latency: launch + steps x step[latency class] + wire = small-message latency of each log, fitted on
// relative error over all logs at once (collectives with different step counts separate the terms).
// Returns what was fitted, for the "fitted:" note.
std::vector<std::string> fit_latencies(FabricFitResult& result, const LatencyLogs& l,
                                       const FabricProfile& base, const FabricFitOptions& options) {
  FabricProfile& p = result.profile;
  std::vector<std::string> fitted_latency;
  if (l.usable.empty()) {
    result.notes.push_back("no log has two or more sizes below " + size_text(options.range_bounds.front()) +
                           ": latencies kept from the base profile");
    return fitted_latency;
  }
  auto system = [&](bool with_launch, double launch) {
    std::vector<std::vector<double>> a;
    std::vector<double> b;
    for (const auto* c : l.usable) {
      std::vector<double> row;
      if (with_launch) row.push_back(1 / c->latency);
      for (const auto& cls : l.classes)
        row.push_back(cls == c->geometry.latency_class ? c->geometry.steps / c->latency : 0);
      a.push_back(row);
      b.push_back((c->latency - c->geometry.wire_latency - (with_launch ? 0 : launch)) / c->latency);
    }
    return nonnegative_least_squares(a, b);
  };
  auto fit = system(true, 0);
  bool with_launch = fit.identifiable;
  if (!with_launch) {
    fit = system(false, base.launch_latency);
    result.notes.push_back(fmt::format(
        "launch_latency_us kept at {:.2f} from the base profile: the logs cannot separate it from the step "
        "latencies (import collectives with different step counts, e.g. all_reduce and all_gather or "
        "sendrecv, to fit it)",
        base.launch_latency * 1e6));
  }
  if (!fit.identifiable) {
    result.notes.push_back("step latencies kept from the base profile: the logs cannot determine them");
    return fitted_latency;
  }
  size_t k = 0;
  if (with_launch) {
    p.launch_latency = fit.x[k++];
    fitted_latency.push_back(fmt::format("launch_latency_us = {:.2f}", p.launch_latency * 1e6));
  }
  for (const auto& cls : l.classes) {
    p.step_latency[cls] = fit.x[k++];
    fitted_latency.push_back(fmt::format("step_latency_us.{} = {:.3f}", cls, p.step_latency[cls] * 1e6));
  }
  return fitted_latency;
}

// podsim charges a route the largest step latency of the classes it crosses. A class kept from the base
// profile (e.g. PCIe on the GPU-NIC path) must not outweigh the class the measurement was fitted to.
void cap_crossed_step_latencies(FabricFitResult& result, const LatencyLogs& l) {
  FabricProfile& p = result.profile;
  for (const auto* c : l.usable) {
    double fitted_step = p.step(c->geometry.latency_class);
    for (const auto& other : c->geometry.other_classes) {
      bool other_fitted = std::find(l.classes.begin(), l.classes.end(), other) != l.classes.end();
      if (p.step(other) <= fitted_step) continue;
      if (other_fitted) {
        result.notes.push_back(fmt::format(
            "step_latency_us.{} ({:.3f}) exceeds step_latency_us.{} ({:.3f}) though {} crosses both; podsim "
            "will "
            "charge the larger, so its latency there is overestimated",
            other, p.step(other) * 1e6, c->geometry.latency_class, fitted_step * 1e6, c->log->op));
        continue;
      }
      result.notes.push_back(
          fmt::format("step_latency_us.{} lowered from {:.3f} (base profile) to {:.3f}: {} over {} ranks "
                      "crosses {} and {}, "
                      "and its measured latency is what one step over both costs",
                      other, p.step(other) * 1e6, fitted_step * 1e6, c->log->op, c->log->ranks, other,
                      c->geometry.latency_class));
      p.step_latency[other] = fitted_step;
    }
  }
}

// How well podsim reproduces every measurement with the fitted profile; each log also goes into the
// profile as a measured collective, so a later run can show what the profile was fitted to.
void score_and_record_measurements(FabricFitResult& result, const CollectivePredictor& model) {
  FabricProfile& p = result.profile;
  for (size_t i = 0; i < result.collectives.size(); ++i) {
    auto& c = result.collectives[i];
    size_t row = 0;
    for (auto& r : c.ranges) {
      for (int k = 0; k < r.points; ++k, ++row) {
        const auto& m = c.log->rows[row];
        double e = relative_error(model(i, m.bytes, p), m.seconds);
        r.model_error.add(e);
        c.model_error.add(e);
      }
      r.summary.model_error = r.model_error.mean_abs;
    }
    MeasuredCollective mc;
    mc.op = c.log->op;
    mc.ranks = c.log->ranks;
    mc.nodes = c.log->nodes;
    mc.bound_by = c.geometry.bandwidth_class;
    mc.source = fmt::format("{}:{}", c.log->file, c.log->first_line);
    for (const auto& r : c.ranges) mc.ranges.push_back(r.summary);
    p.measured.push_back(std::move(mc));
  }
}

// The name given, else the devices and hosts the logs were measured on.
std::string profile_name(const std::vector<NcclTestsLog>& logs, const FabricFitOptions& options) {
  if (!options.name.empty()) return options.name;
  std::set<std::string> hosts, devices;
  for (const auto& log : logs) {
    hosts.insert(log.hosts.begin(), log.hosts.end());
    if (!log.device.empty()) devices.insert(log.device);
  }
  return fmt::format("NCCL measured on {} ({})", join({devices.begin(), devices.end()}),
                     join({hosts.begin(), hosts.end()}));
}

}  // namespace

double geometry_time(const CollectiveGeometry& g, double bytes, const FabricProfile& profile) {
  double busbw = g.ideal_busbw * profile.efficiency(g.bandwidth_class);
  return profile.launch_latency + g.steps * profile.step(g.latency_class) + g.wire_latency +
         (busbw > 0 ? bytes * g.bus_factor / busbw : 0);
}

FabricFitResult fit_fabric_profile(const std::vector<NcclTestsLog>& logs,
                                   const std::vector<CollectiveGeometry>& geometry, const FabricProfile& base,
                                   const FabricFitOptions& options, const CollectivePredictor& predict) {
  if (logs.size() != geometry.size()) throw std::logic_error("fit_fabric_profile: one geometry per log");
  FabricFitResult result;
  FabricProfile& p = result.profile;
  p = base;
  p.measured.clear();
  p.file.clear();

  for (size_t i = 0; i < logs.size(); ++i)
    result.collectives.push_back(fit_collective(logs[i], geometry[i], options));
  std::vector<std::string> fitted_bw = fit_link_efficiency(result, options);
  // Pointers into result.collectives: it is not resized from here on.
  LatencyLogs latency = latency_logs(result);
  std::vector<std::string> fitted_latency = fit_latencies(result, latency, base, options);
  cap_crossed_step_latencies(result, latency);

  CollectivePredictor model = predict ? predict : [&](size_t i, double bytes, const FabricProfile& prof) {
    return geometry_time(geometry[i], bytes, prof);
  };
  score_and_record_measurements(result, model);

  p.name = profile_name(logs, options);
  std::string fitted = join(fitted_bw, "; ");
  if (!fitted_latency.empty()) fitted += (fitted.empty() ? "" : "; ") + join(fitted_latency, "; ");
  result.notes.insert(result.notes.begin(), "fitted: " + (fitted.empty() ? "nothing" : fitted));
  return result;
}

}  // namespace podsim::calibration
