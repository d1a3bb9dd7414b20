#include "podsim/report/writers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "podsim/core/csv_writer.hpp"
#include "podsim/core/units.hpp"
#include "podsim/workload/registry.hpp"

namespace podsim::report {
namespace {

using workload::Category;

std::string num(double v, int digits = 6) {
  return fmt::format("{:.{}g}", v, digits);
}

std::string category_column(Category c) {
  switch (c) {
    case Category::compute: return "compute_s";
    case Category::optimizer: return "optimizer_s";
    default: return fmt::format("{}_exposed_s", workload::to_string(c));
  }
}

// Settings columns of every workload kind, in display order (each kind declares its own; the workload
// registry merges them).
const std::vector<std::string>& setting_columns() {
  return workload::workload_registry().setting_columns;
}

}  // namespace

const std::vector<std::string>& summary_columns() {
  static const std::vector<std::string> columns = [] {
    std::vector<std::string> c = {"devices",
                                  "step_time_s",
                                  "tflops_per_device",
                                  "mfu",
                                  "memory_per_device_GiB",
                                  "tokens_per_s",
                                  "status",
                                  "topology",
                                  "workload",
                                  "workload_kind",
                                  "device",
                                  "samples_per_s",
                                  "hfu",
                                  "memory_capacity_GiB"};
    for (Category cat : workload::kChargeOrder)
      if (!plan::is_late_column(cat)) c.push_back(category_column(cat));
    c.push_back("bubble_s");
    c.insert(c.end(), setting_columns().begin(), setting_columns().end());
    for (Category cat : workload::kChargeOrder)  // categories added later: after the columns already there
      if (plan::is_late_column(cat)) c.push_back(category_column(cat));
    c.push_back("simulated_tasks");
    c.insert(c.end(), {"out_of_memory_tier", "memory_needed_GiB", "memory_available_GiB"});
    c.push_back("mfu_causal");  // trailing: columns are only ever appended
    return c;
  }();
  return columns;
}

Row summary_row(const RunResult& r) {
  bool ok = r.ok();
  auto val = [&](double v, int digits = 6) { return ok ? num(v, digits) : std::string(); };
  std::map<std::string, std::string> values = {
      {"devices", std::to_string(r.devices())},
      {"step_time_s", val(r.step_time())},
      {"tflops_per_device", val(r.tflops_per_device(), 5)},
      {"mfu", val(r.mfu(), 4)},
      {"mfu_causal", val(r.mfu_causal(), 4)},
      {"memory_per_device_GiB", num(r.memory_per_device() / GiB, 4)},
      {"tokens_per_s", val(r.tokens_per_s())},
      {"status", r.status},
      {"topology", r.topology_name},
      {"workload", r.workload_name},
      {"workload_kind", r.workload_kind},
      {"device", r.device_name},
      {"samples_per_s", val(r.samples_per_s())},
      {"hfu", val(r.hfu(), 4)},
      {"memory_capacity_GiB", num(r.device_memory_capacity / GiB, 4)},
      {"bubble_s", val(r.mean.idle)},
      {"simulated_tasks", std::to_string(r.plan.graph.tasks.size())},
  };
  for (Category c : workload::kChargeOrder) values[category_column(c)] = val(r.mean[c]);
  if (auto shortfall = r.out_of_memory()) {
    values["out_of_memory_tier"] = shortfall->tier;
    values["memory_needed_GiB"] = num(shortfall->needed_bytes / GiB, 4);
    values["memory_available_GiB"] = num(shortfall->available_bytes / GiB, 4);
  }
  for (const auto& [k, v] : r.plan.settings) {
    if (std::find(setting_columns().begin(), setting_columns().end(), k) == setting_columns().end())
      throw std::logic_error(fmt::format(
          "setting '{}' is not a summary column; add it to its kind's setting columns (workload registry)",
          k));
    values[k] = v;
  }
  Row row;
  for (const auto& col : summary_columns()) row.emplace_back(col, values.count(col) ? values[col] : "");
  return row;
}

std::string csv_line(const Row& row, bool header) {
  std::vector<std::string> cells;
  for (const auto& [column, value] : row) cells.push_back(header ? column : value);
  return csv_record(cells);
}

std::string csv(const std::vector<Row>& rows) {
  if (rows.empty()) return "";
  std::string out = csv_line(rows[0], true);
  for (const auto& row : rows) out += csv_line(row, false);
  return out;
}

std::string breakdown_csv(const RunResult& r) {
  std::vector<std::string> header = {"stage"};
  for (Category c : workload::kChargeOrder)
    if (!plan::is_late_column(c)) header.push_back(category_column(c));
  header.insert(header.end(), {"bubble_s", "total_s", "memory_GiB"});
  for (Category c : workload::kChargeOrder)
    if (plan::is_late_column(c)) header.push_back(category_column(c));
  std::string out = csv_record(header);
  // `time` is null for a run that was not simulated: its time columns stay empty.
  auto line = [&](const std::string& name, const StageBreakdown* time, double mem) {
    std::vector<std::string> cells = {name};
    for (Category c : workload::kChargeOrder)
      if (!plan::is_late_column(c)) cells.push_back(time ? num((*time)[c]) : "");
    cells.push_back(time ? num(time->idle) : "");
    cells.push_back(time ? num(time->total()) : "");
    cells.push_back(num(mem / GiB, 4));
    for (Category c : workload::kChargeOrder)
      if (plan::is_late_column(c)) cells.push_back(time ? num((*time)[c]) : "");
    return csv_record(cells);
  };
  auto lane_name = [&](size_t lane) {
    return lane < r.plan.graph.lane_names.size() ? r.plan.graph.lane_names[lane] : std::to_string(lane);
  };
  auto lane_memory = [&](size_t lane) {
    return lane < r.plan.memory.size() ? r.plan.memory[lane].total() : 0.0;
  };
  if (r.ok()) {
    for (const auto& s : r.stages) out += line(lane_name(s.stage), &s, lane_memory(s.stage));
    out += line("mean", &r.mean, r.memory_per_device());
  } else {
    for (size_t lane = 0; lane < r.plan.memory.size(); ++lane)
      out += line(lane_name(lane), nullptr, lane_memory(lane));
    out += line("mean", nullptr, r.memory_per_device());
  }
  return out;
}

std::string result_json(const RunResult& r) {
  nlohmann::ordered_json j;
  nlohmann::ordered_json summary;
  for (const auto& [k, v] : summary_row(r)) summary[k] = v;
  j["summary"] = summary;
  j["status_detail"] = r.status_detail;
  if (auto shortfall = r.out_of_memory())
    j["out_of_memory"] = {{"tier", shortfall->tier},
                          {"needed_GiB", shortfall->needed_bytes / GiB},
                          {"available_GiB", shortfall->available_bytes / GiB}};
  j["description"] = r.plan.description;
  if (const auto& st = r.stragglers)
    j["stragglers"] = {{"slow_devices", st->slow_devices},
                       {"slow_replicas", st->slow_replicas},
                       {"replicas", st->replicas},
                       {"lockstep_replicas", st->lockstep_replicas},
                       {"balanced_step_time_s", st->balanced_step},
                       {"step_time_s", st->step},
                       {"loss_fraction", st->loss()},
                       {"gating_replica", st->gating_replica},
                       {"gating_stage_speed", st->gating_stage_speed},
                       {"patterns_replayed", st->patterns_simulated},
                       {"patterns_not_replayed", st->patterns_skipped},
                       {"slowdowns", st->entries}};
  if (r.links) j["links"] = nlohmann::ordered_json::parse(links_json(*r.links));  // --links
  j["inputs"] = {{"topology_file", r.topology_file}, {"workload_file", r.workload_file}};
  nlohmann::ordered_json metrics = nlohmann::ordered_json::object();
  for (const auto& [k, v] : r.plan.metrics) metrics[k] = v;
  j["metrics"] = metrics;
  nlohmann::ordered_json lanes = nlohmann::ordered_json::array();
  for (size_t s = 0; s < r.plan.memory.size(); ++s) {
    const auto& m = r.plan.memory[s];
    nlohmann::ordered_json st = {
        {"lane", s < r.plan.graph.lane_names.size() ? r.plan.graph.lane_names[s] : std::to_string(s)},
        {"memory_GiB",
         {{"weights", m.weights / GiB},
          {"gradients", m.gradients / GiB},
          {"optimizer", m.optimizer / GiB},
          {"activations", m.activations / GiB},
          {"buffers", m.buffers / GiB},
          {"framework", m.framework / GiB},
          {"total", m.total() / GiB}}}};
    if (s < r.stages.size()) {
      nlohmann::ordered_json time;
      for (Category c : workload::kChargeOrder) time[workload::to_string(c)] = r.stages[s][c];
      time["idle"] = r.stages[s].idle;
      st["time_s"] = time;
    }
    lanes.push_back(st);
  }
  j["lanes"] = lanes;
  nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
  for (const auto& k : r.plan.kernels)
    kernels.push_back({{"group", k.group},
                       {"kernel", k.name},
                       {"seconds", k.seconds},
                       {"flops", k.flops},
                       {"bytes", k.bytes}});
  j["kernels"] = kernels;
  j["notes"] = r.plan.notes;
  j["search"] = r.search_log;
  j["engine"] = {{"simgrid_parallel_tasks", r.replay.simgrid_activities},
                 {"hosts", r.replay.hosts},
                 {"links", r.replay.links},
                 {"tasks", r.plan.graph.tasks.size()}};
  return j.dump(2) + "\n";
}

std::vector<std::string> write_run_outputs(const RunResult& r, const std::string& dir) {
  prepare_output_directory(dir, "--out");
  std::vector<std::pair<std::string, std::string>> files = {
      {"summary.csv", csv({summary_row(r)})},
      {"breakdown.csv", breakdown_csv(r)},
      {"result.json", result_json(r)},
  };
  std::vector<std::string> written;
  for (const auto& [name, content] : files) {
    atomic_write((std::filesystem::path(dir) / name).string(), content);
    written.push_back(name);
  }
  return written;
}

}  // namespace podsim::report
