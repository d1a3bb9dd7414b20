#include "podsim/driver/sweep_point.hpp"

#include <fmt/format.h>

#include <map>

#include "podsim/core/error.hpp"
#include "podsim/core/units.hpp"
#include "podsim/driver/goodput_assessment.hpp"
#include "podsim/reliability/reliability_profile.hpp"
#include "podsim/report/writers.hpp"

namespace podsim::driver {
namespace {

// The goodput columns of a point whose study names a reliability profile (empty cells when the run did not
// simulate).
void add_goodput(const study::Study& s, const RunRequest& request, const report::RunResult& r,
                 std::map<std::string, std::string>& values) {
  if (s.goodput_file.empty() || !r.ok()) return;
  auto a = assess_goodput(request, r, reliability::load_reliability_profile(s.goodput_file, {}));
  values["goodput"] = fmt::format("{:.4f}", a.estimate.fraction);
  values["job_failures_per_day"] = fmt::format("{:.4g}", a.failures_per_hour * 24);
  values["checkpoint_interval_min"] = fmt::format("{:.4g}", a.estimate.interval_seconds / 60);
  values["ideal_train_days"] = fmt::format("{:.4g}", a.ideal_train_seconds / 86400);
  values["expected_train_days"] = fmt::format("{:.4g}", a.expected_train_seconds / 86400);
}

// The memory components of the lane with the most memory (the one memory_per_device_GiB reports), also for a
// point that did not fit; empty cells when the workload reported no memory.
void add_memory(const report::RunResult& r, std::map<std::string, std::string>& values) {
  const workload::MemoryBreakdown* peak = nullptr;
  for (const auto& m : r.plan.memory)
    if (!peak || m.total() > peak->total()) peak = &m;
  if (!peak) return;
  const auto& c = study::memory_columns();
  const double parts[] = {peak->weights,     peak->gradients, peak->optimizer,
                          peak->activations, peak->buffers,   peak->framework};
  for (size_t i = 0; i < c.size(); ++i) values[c[i]] = fmt::format("{:.4g}", parts[i] / GiB);
}

// The detail cell: why a point did not run, or what its workload warned about (a key an axis left
// inconsistent or unused), so that a sweep keeps the warnings `podsim run` prints in its summary.
std::string detail_of(const report::RunResult& r) {
  std::string detail = r.status_detail;
  for (const auto& w : r.plan.warnings) detail += (detail.empty() ? "warning: " : "; warning: ") + w;
  return detail;
}

study::ResultRow row_of(const study::Study& s, const study::Point& p, const RunRequest& request,
                        const report::RunResult& r) {
  report::Row summary = report::summary_row(r);
  std::map<std::string, std::string> values(summary.begin(), summary.end());
  add_goodput(s, request, r, values);
  add_memory(r, values);
  study::ResultRow row;
  row.point = p.index;
  row.id = p.id;
  for (const auto& c : study::results_columns(s)) {
    if (c == "point")
      row.cells.push_back(std::to_string(p.index));
    else if (c == "point_id")
      row.cells.push_back(p.id);
    else if (c == "detail")
      row.cells.push_back(detail_of(r));
    else if (p.values.count(c))
      row.cells.push_back(p.values.at(c));
    else
      row.cells.push_back(values.count(c) ? values[c] : "");
  }
  return row;
}

}  // namespace

study::ResultRow run_point(const study::Study& s, const study::Point& p, const Simulator& simulator) {
  try {
    RunRequest request;
    request.topology_file = p.topology_file;
    request.workload_file = p.workload_file;
    for (const auto& a : p.sets) request.sets.push_back(a.key + "=" + a.value);
    return row_of(s, p, request, simulator(request));
  } catch (const InputError& e) {
    return study::unrun_row(s, p, "invalid", e.what());
  } catch (const InfeasibleConfig& e) {
    return study::unrun_row(s, p, e.status(), e.what());
  } catch (const InvariantViolation& e) {
    return study::unrun_row(s, p, "failed",
                            fmt::format("invariant violated (a bug in podsim): {}", e.what()));
  } catch (const std::exception& e) {
    return study::unrun_row(s, p, "failed", fmt::format("internal error (a bug in podsim): {}", e.what()));
  }
}

}  // namespace podsim::driver
