#include "podsim/report/writers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
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
    const auto& late = workload::workload_registry().late_setting_columns;
    c.insert(c.end(), late.begin(), late.end());
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
  const auto& late = workload::workload_registry().late_setting_columns;
  for (const auto& [k, v] : r.plan.settings) {
    if (std::find(setting_columns().begin(), setting_columns().end(), k) == setting_columns().end() &&
        std::find(late.begin(), late.end(), k) == late.end())
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
