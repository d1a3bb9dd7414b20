#include "podsim/driver/nvidia_validation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "podsim/core/error.hpp"
#include "podsim/driver/slurm_submit.hpp"
#include "podsim/topology/loader.hpp"

namespace podsim::driver {
namespace {

bool has_all(const CsvTable& t, const std::vector<std::string>& columns) {
  return std::all_of(columns.begin(), columns.end(), [&](const auto& c) { return t.has_column(c); });
}

const std::vector<std::string> kNvidiaColumns = {
    "row_id", "system", "model",   "num_gpus", "precision",
    "gbs",    "mbs",    "seq_len", "fsdp",     "tp",
    "pp",     "cp",     "vp",      "ep",       "tokens_per_sec_per_gpu"};
const std::vector<std::string> kMegatronColumns = {"params_billion", "tflops_per_gpu", "gpus"};

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// The rows the filters select, in table order; an id asked for that the table lacks is an error.
std::vector<size_t> select_rows(const CsvTable& table, const NvidiaValidationRequest& request) {
  std::vector<size_t> out;
  std::set<std::string> seen;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    std::string id = table.text(i, "row_id");
    seen.insert(id);
    if (!request.systems.empty() && !request.systems.count(table.text(i, "system"))) continue;
    if (!request.row_ids.empty() && !request.row_ids.count(id)) continue;
    out.push_back(i);
  }
  for (const auto& id : request.row_ids)
    if (!seen.count(id))
      throw InputError(fmt::format("--rows {}: {} has no row with row_id {}", id, table.file, id));
  if (out.empty() && !request.systems.empty())
    throw InputError(fmt::format("--system {}: no row of {} is on that system (column system)",
                                 *request.systems.begin(), table.file));
  return out;
}

// Every preset a selected row will use must exist, checked before the first row runs (minutes may pass).
void require_presets(const std::vector<NvidiaRow>& rows, const PresetMapping& mapping) {
  for (const auto& row : rows) {
    if (auto s = mapping.systems.find(row.system); s != mapping.systems.end()) require_preset_file(s->second);
    if (auto m = mapping.models.find(row.model); m != mapping.models.end()) require_preset_file(m->second);
  }
}

std::string relative_path(const std::string& path) {
  return std::filesystem::proximate(path).lexically_normal().string();
}

std::string run_command(const RunRequest& request) {
  std::string command = "podsim run -t " + shell_word(relative_path(request.topology_file)) + " -w " +
                        shell_word(relative_path(request.workload_file));
  for (const auto& s : request.sets) command += " --set " + shell_word(s);
  return command;
}

NvidiaRowResult run_row(const NvidiaRow& row, const PresetMapping& mapping,
                        std::map<std::string, int>& per_node) {
  NvidiaRowResult out;
  out.row = row;
  int devices_per_node = 1;
  if (auto s = mapping.systems.find(row.system); s != mapping.systems.end() && !s->second.file.empty()) {
    auto [it, fresh] = per_node.try_emplace(s->second.file, 0);
    if (fresh) it->second = topology::load_topology(s->second.file).devices_per_node;
    devices_per_node = std::max(1, it->second);
  }
  RowPlan plan = plan_nvidia_row(row, mapping, devices_per_node);
  out.dp = plan.dp;
  if (!plan.not_expressible.empty()) {
    out.status = "not_expressible";
    out.detail = plan.not_expressible;
    return out;
  }
  out.command = run_command(plan.request);
  try {
    report::RunResult r = simulate(plan.request);
    if (!r.ok()) {
      out.status = r.status == "out_of_memory" ? "out_of_memory" : "error";
      out.detail = r.status == "out_of_memory" ? r.status_detail : r.status + ": " + r.status_detail;
      return out;
    }
    out.status = "ok";
    out.step_time = r.step_time();
    // Tokens per second per GPU, as NVIDIA reports it: the step's sequences times their length.
    out.predicted = r.plan.samples_per_step * static_cast<double>(*row.seq_len) /
                    (out.step_time * static_cast<double>(*row.num_gpus));
    out.error_percent = 100 * (out.predicted - *row.published) / *row.published;
  } catch (const InputError& e) {
    out.status = "error";
    out.detail = e.what();
  }
  return out;
}

}  // namespace

TableSchema detect_schema(const CsvTable& table) {
  if (has_all(table, kNvidiaColumns)) return TableSchema::nvidia;
  if (has_all(table, kMegatronColumns)) return TableSchema::megatron_sc21;
  throw InputError(
      fmt::format("{}: not a validation table podsim knows: NVIDIA's schema needs the columns {}; "
                  "the Megatron SC21 schema needs {}",
                  table.file, join(kNvidiaColumns), join(kMegatronColumns)));
}

NvidiaValidation validate_nvidia_table(const NvidiaValidationRequest& request,
                                       const NvidiaValidationHooks& hooks) {
  CsvTable table = read_csv(request.table_file);
  if (detect_schema(table) != TableSchema::nvidia)
    throw InputError(
        fmt::format("{}: not in NVIDIA's schema (columns {})", table.file, join(kNvidiaColumns)));
  PresetMapping mapping = load_preset_mapping(request.mapping_file);
  std::vector<NvidiaRow> rows;
  for (size_t i : select_rows(table, request)) rows.push_back(read_nvidia_row(table, i));
  require_presets(rows, mapping);
  if (hooks.table_read) hooks.table_read(table, mapping);
  NvidiaValidation v;
  v.table_file = request.table_file;
  v.mapping_file = request.mapping_file;
  std::map<std::string, int> per_node;
  double sum_abs = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (hooks.row_started) hooks.row_started(i, rows.size(), rows[i]);
    NvidiaRowResult r = run_row(rows[i], mapping, per_node);
    if (r.status == "ok") {
      v.ok_rows++;
      sum_abs += std::fabs(r.error_percent);
      v.max_abs_error = std::max(v.max_abs_error, std::fabs(r.error_percent));
    }
    if (hooks.row_done) hooks.row_done(r);
    v.rows.push_back(std::move(r));
  }
  if (v.ok_rows) v.mean_abs_error = sum_abs / v.ok_rows;
  return v;
}

}  // namespace podsim::driver
