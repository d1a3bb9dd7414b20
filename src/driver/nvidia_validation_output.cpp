// The files `podsim validate` writes for a table in NVIDIA's schema: validation.csv and the --json document.
#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "podsim/driver/nvidia_validation.hpp"
#include "podsim/report/html_validate.hpp"
#include "podsim/report/output_files.hpp"
#include "podsim/report/writers.hpp"

namespace podsim::driver {
namespace {

std::string cell(const std::optional<long long>& v) {
  return v ? std::to_string(*v) : "";
}

nlohmann::ordered_json number_or_null(const std::optional<long long>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json row_json(const NvidiaRowResult& r) {
  using J = nlohmann::ordered_json;
  bool ok = r.status == "ok";
  const NvidiaRow& row = r.row;
  return {{"row_id", row.row_id},
          {"system", row.system},
          {"model", row.model},
          {"status", r.status},
          {"predicted", ok ? J(r.predicted) : J(nullptr)},
          {"published", row.published ? J(*row.published) : J(nullptr)},
          {"error_percent", ok ? J(r.error_percent) : J(nullptr)},
          {"detail", r.detail},
          {"command", r.command.empty() ? J(nullptr) : J(r.command)},
          {"step_time_s", ok ? J(r.step_time) : J(nullptr)},
          {"num_gpus", number_or_null(row.num_gpus)},
          {"precision", row.precision},
          {"gbs", number_or_null(row.gbs)},
          {"mbs", number_or_null(row.mbs)},
          {"seq_len", number_or_null(row.seq_len)},
          {"fsdp", number_or_null(row.fsdp)},
          {"tp", number_or_null(row.tp)},
          {"pp", number_or_null(row.pp)},
          {"cp", number_or_null(row.cp)},
          {"vp", number_or_null(row.vp)},
          {"ep", number_or_null(row.ep)},
          {"ga", number_or_null(row.ga)},
          {"dp", r.dp ? J(r.dp) : J(nullptr)},
          {"settings", row.settings.empty() ? J(nullptr) : J(settings_text(row))}};
}

// validate.html: every row, predicted tokens/s per GPU against the published number.
report::ValidationReport html_report(const NvidiaValidation& v) {
  report::ValidationReport out{"NVIDIA pretraining performance: predicted against published",
                               std::filesystem::path(v.table_file).filename().string(),
                               "tokens/s per GPU",
                               {}};
  for (const auto& r : v.rows)
    out.rows.push_back({fmt::format("row {}: {} on {} ({} GPUs, {}){}", r.row.row_id, r.row.model,
                                    r.row.system, cell(r.row.num_gpus), r.row.precision,
                                    r.row.settings.empty() ? "" : ", " + settings_text(r.row)),
                        r.row.published.value_or(0), r.predicted, r.error_percent, r.status, r.detail});
  return out;
}

}  // namespace

void write_nvidia_validation_csv(const std::string& dir, const NvidiaValidation& v) {
  std::vector<report::Row> rows;
  for (const auto& r : v.rows) {
    bool ok = r.status == "ok";
    const NvidiaRow& row = r.row;
    rows.push_back(
        {{"row_id", row.row_id},
         {"system", row.system},
         {"model", row.model},
         {"num_gpus", cell(row.num_gpus)},
         {"precision", row.precision},
         {"gbs", cell(row.gbs)},
         {"mbs", cell(row.mbs)},
         {"seq_len", cell(row.seq_len)},
         {"fsdp", cell(row.fsdp)},
         {"tp", cell(row.tp)},
         {"pp", cell(row.pp)},
         {"cp", cell(row.cp)},
         {"vp", cell(row.vp)},
         {"ep", cell(row.ep)},
         {"ga", cell(row.ga)},
         {"dp", r.dp ? std::to_string(r.dp) : ""},
         {"settings", settings_text(row)},
         {"published_tokens_per_sec_per_gpu", row.published ? fmt::format("{}", *row.published) : ""},
         {"predicted_tokens_per_sec_per_gpu", ok ? fmt::format("{:.1f}", r.predicted) : ""},
         {"error_percent", ok ? fmt::format("{:.2f}", r.error_percent) : ""},
         {"step_time_s", ok ? fmt::format("{:.6g}", r.step_time) : ""},
         {"status", r.status},
         {"detail", r.detail},
         {"command", r.command}});
  }
  std::filesystem::create_directories(dir);
  report::atomic_write(dir + "/validation.csv", report::csv(rows));
  report::atomic_write(dir + "/validate.html", report::validation_report_html(html_report(v)));
}

std::string nvidia_validation_json(const NvidiaValidation& v) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  std::map<std::string, int> counts;
  for (const auto& r : v.rows) {
    rows.push_back(row_json(r));
    counts[r.status]++;
  }
  nlohmann::ordered_json j = {
      {"table", v.table_file},
      {"mapping", v.mapping_file},
      {"metric", "tokens_per_sec_per_gpu"},
      {"rows", rows},
      {"summary",
       {{"rows", v.rows.size()},
        {"status_counts", counts},
        {"ok_rows", v.ok_rows},
        {"mean_abs_error_percent", v.ok_rows ? nlohmann::ordered_json(v.mean_abs_error) : nullptr},
        {"max_abs_error_percent", v.ok_rows ? nlohmann::ordered_json(v.max_abs_error) : nullptr}}}};
  return j.dump(2) + "\n";
}

}  // namespace podsim::driver
