#include "podsim/driver/sweep_point.hpp"

#include <fmt/format.h>

#include <map>

#include "podsim/core/error.hpp"
#include "podsim/report/writers.hpp"

namespace podsim::driver {
namespace {

study::ResultRow row_of(const study::Study& s, const study::Point& p, const report::RunResult& r) {
  report::Row summary = report::summary_row(r);
  std::map<std::string, std::string> values(summary.begin(), summary.end());
  study::ResultRow row;
  row.point = p.index;
  row.id = p.id;
  for (const auto& c : study::results_columns(s)) {
    if (c == "point")
      row.cells.push_back(std::to_string(p.index));
    else if (c == "point_id")
      row.cells.push_back(p.id);
    else if (c == "detail")
      row.cells.push_back(r.status_detail);
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
    return row_of(s, p, simulator(request));
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
