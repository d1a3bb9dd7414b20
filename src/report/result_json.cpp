// result.json (result_json.hpp has the schema): summary.csv's row with real JSON types, the provenance of
// the run, the auto-search as rows, and the detail no CSV has (lanes, kernels, metrics, notes).
#include "podsim/report/result_json.hpp"

#include <charconv>
#include <cmath>
#include <set>

#include "podsim/core/units.hpp"
#include "podsim/report/link_traffic.hpp"
#include "podsim/report/writers.hpp"

namespace podsim::report {
namespace {

using json = nlohmann::ordered_json;
using workload::Category;

// Columns that hold names or a status: strings even where the text would parse as a number.
bool text_column(const std::string& column) {
  static const std::set<std::string> text = {"status",        "topology", "workload",
                                             "workload_kind", "device",   "out_of_memory_tier"};
  return text.count(column) > 0;
}

json summary_json(const RunResult& r) {
  json summary = json::object();
  for (const auto& [column, text] : summary_row(r)) summary[column] = summary_cell_json(column, text);
  return summary;
}

json search_json(const RunResult& r) {
  json rows = json::array();
  for (const auto& row : r.search) {
    bool ok = row.status == "ok";
    rows.push_back({{"candidate", row.candidate},
                    {"status", row.status},
                    {"step_time_s", ok ? json(row.step_time) : json(nullptr)},
                    {"samples_per_step", ok ? json(row.samples_per_step) : json(nullptr)},
                    {"chosen", row.chosen}});
  }
  return rows;
}

json stragglers_json(const StragglerOutcome& st) {
  return {{"slow_devices", st.slow_devices},
          {"slow_replicas", st.slow_replicas},
          {"replicas", st.replicas},
          {"lockstep_replicas", st.lockstep_replicas},
          {"balanced_step_time_s", st.balanced_step},
          {"step_time_s", st.step},
          {"loss_fraction", st.loss()},
          {"gating_replica", st.gating_replica},
          {"gating_stage_speed", st.gating_stage_speed},
          {"patterns_replayed", st.patterns_simulated},
          {"patterns_not_replayed", st.patterns_skipped},
          {"slowdowns", st.entries}};
}

json lanes_json(const RunResult& r) {
  json lanes = json::array();
  for (size_t s = 0; s < r.plan.memory.size(); ++s) {
    const auto& m = r.plan.memory[s];
    json st = {{"lane", s < r.plan.graph.lane_names.size() ? r.plan.graph.lane_names[s] : std::to_string(s)},
               {"memory_GiB",
                {{"weights", m.weights / GiB},
                 {"gradients", m.gradients / GiB},
                 {"optimizer", m.optimizer / GiB},
                 {"activations", m.activations / GiB},
                 {"buffers", m.buffers / GiB},
                 {"framework", m.framework / GiB},
                 {"total", m.total() / GiB}}}};
    if (s < r.stages.size()) {
      json time;
      for (Category c : workload::kChargeOrder) time[workload::to_string(c)] = r.stages[s][c];
      time["idle"] = r.stages[s].idle;
      st["time_s"] = time;
    }
    lanes.push_back(st);
  }
  return lanes;
}

json kernels_json(const RunResult& r) {
  json kernels = json::array();
  for (const auto& k : r.plan.kernels)
    kernels.push_back({{"group", k.group},
                       {"kernel", k.name},
                       {"seconds", k.seconds},
                       {"flops", k.flops},
                       {"bytes", k.bytes}});
  return kernels;
}

}  // namespace

json summary_cell_json(const std::string& column, const std::string& text) {
  if (text.empty()) return nullptr;
  if (text_column(column)) return text;
  // Settings such as sequence_parallel and tp_overlap are written "true" / "false" in summary.csv.
  if (text == "true") return true;
  if (text == "false") return false;
  const char* begin = text.data();
  const char* end = begin + text.size();
  long long integer = 0;
  if (auto [p, ec] = std::from_chars(begin, end, integer); ec == std::errc() && p == end) return integer;
  double number = 0;
  if (auto [p, ec] = std::from_chars(begin, end, number);
      ec == std::errc() && p == end && std::isfinite(number))
    return number;
  return text;  // a setting such as schedule=1f1b
}

json provenance_json(const Provenance& p) {
  json inputs = json::array();
  for (const auto& f : p.inputs) inputs.push_back({{"role", f.role}, {"path", f.path}, {"sha256", f.sha256}});
  return {{"podsim_version", p.podsim_version},
          {"command_line", p.command_line},
          {"sets", p.sets},
          {"inputs", inputs},
          {"time_utc", p.time_utc}};
}

std::string result_json(const RunResult& r) {
  json j;
  j["summary"] = summary_json(r);
  j["provenance"] = provenance_json(r.provenance);
  j["status_detail"] = r.status_detail;
  if (auto shortfall = r.out_of_memory())
    j["out_of_memory"] = {{"tier", shortfall->tier},
                          {"needed_GiB", shortfall->needed_bytes / GiB},
                          {"available_GiB", shortfall->available_bytes / GiB}};
  j["description"] = r.plan.description;
  if (const auto& st = r.stragglers) j["stragglers"] = stragglers_json(*st);
  if (r.links) j["links"] = json::parse(links_json(*r.links));  // --links
  j["inputs"] = {{"topology_file", r.topology_file}, {"workload_file", r.workload_file}};
  json metrics = json::object();
  for (const auto& [k, v] : r.plan.metrics) metrics[k] = v;
  j["metrics"] = metrics;
  j["lanes"] = lanes_json(r);
  j["kernels"] = kernels_json(r);
  j["notes"] = r.plan.notes;
  j["search"] = search_json(r);
  j["search_log"] = r.search_log;
  j["engine"] = {{"simgrid_parallel_tasks", r.replay.simgrid_activities},
                 {"hosts", r.replay.hosts},
                 {"links", r.replay.links},
                 {"tasks", r.plan.graph.tasks.size()}};
  // replace: a command line or path that is not UTF-8 (file names are bytes) must not abort the dump.
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace podsim::report
