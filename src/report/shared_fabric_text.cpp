#include "podsim/report/shared_fabric_text.hpp"

#include <fmt/format.h>

#include "podsim/core/csv_writer.hpp"

namespace podsim::report {
namespace {

std::string servers(const std::vector<int>& nodes) {
  if (nodes.empty()) return "-";
  bool contiguous = nodes.back() - nodes.front() + 1 == static_cast<int>(nodes.size());
  if (nodes.size() == 1) return std::to_string(nodes.front());
  return contiguous ? fmt::format("{}-{}", nodes.front(), nodes.back())
                    : fmt::format("{} servers from {} to {}", nodes.size(), nodes.front(), nodes.back());
}

std::string num(double v) {
  return fmt::format("{:.6g}", v);
}

}  // namespace

std::string shared_fabric_summary(const SharedFabricResult& r) {
  std::string out = fmt::format("podsim: {} jobs on {} ({} servers), placement {}\n", r.jobs.size(),
                                r.topology_name, r.topology_nodes, r.placement);
  for (size_t j = 0; j < r.jobs.size(); ++j) {
    const auto& job = r.jobs[j];
    out += fmt::format(
        "  job {:<3} {:<22} {:>5} GPUs on servers {:<14} step {:.4g} s alone, {:.4g} s together ({:+.1f}%)\n",
        j + 1, job.alone.workload_name, job.alone.devices(), servers(job.nodes), job.alone_step,
        job.together_step, 100 * job.slowdown());
  }
  out += fmt::format("  together     {:.4g} s until the last job's step ends; {} SimGrid activities\n",
                     r.makespan, r.simgrid_activities);
  for (const auto& n : r.notes) out += fmt::format("  note         {}\n", n);
  return out;
}

std::string shared_fabric_csv(const SharedFabricResult& r) {
  std::string s =
      csv_record({"job", "workload", "workload_file", "devices", "servers", "alone_step_time_s",
                  "together_step_time_s", "slowdown_percent", "alone_tokens_per_s", "together_tokens_per_s"});
  for (size_t j = 0; j < r.jobs.size(); ++j) {
    const auto& job = r.jobs[j];
    std::string list;
    for (int n : job.nodes) list += fmt::format("{}{}", list.empty() ? "" : " ", n);
    double tokens = job.alone.plan.tokens_per_step;
    s += csv_record({std::to_string(j + 1), job.alone.workload_name, job.workload_file,
                     std::to_string(job.alone.devices()), list, num(job.alone_step), num(job.together_step),
                     num(100 * job.slowdown()), job.alone_step > 0 ? num(tokens / job.alone_step) : "",
                     job.together_step > 0 ? num(tokens / job.together_step) : ""});
  }
  return s;
}

}  // namespace podsim::report
