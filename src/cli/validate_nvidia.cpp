// podsim validate for tables in NVIDIA's schema: the printed table (rows as they finish, progress on
// stderr) and the output files; driver/nvidia_validation.hpp predicts the rows.
#include "podsim/cli/validate_nvidia.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "podsim/core/error.hpp"
#include "podsim/report/output_files.hpp"

namespace podsim::cli {
namespace {

std::string cell(const std::optional<long long>& v) {
  return v ? std::to_string(*v) : "-";
}

// Column widths for the system and model names: NVIDIA's fit the defaults, other tables' may be longer.
struct NameWidths {
  size_t system = 9, model = 16;
};

void print_header(const CsvTable& table, const driver::PresetMapping& mapping, NameWidths& widths) {
  for (size_t i = 0; i < table.rows.size(); ++i) {
    if (table.has_column("system")) widths.system = std::max(widths.system, table.text(i, "system").size());
    if (table.has_column("model")) widths.model = std::max(widths.model, table.text(i, "model").size());
  }
  fmt::print("# {} (presets: {})\n", table.file, mapping.file);
  for (const auto& c : table.comments)  // the provenance lines: where the numbers were published
    if (c.find("(A)") != std::string::npos || c.find("(B)") != std::string::npos ||
        c.find("(C)") != std::string::npos || c.find("Source:") != std::string::npos)
      fmt::print("#{}\n", c);
  fmt::print("{:>6} {:<{}} {:<{}} {:>5} {:<9} {:>2} {:>2} {:>2} {:>2} {:>4} {:>5} {:>9} {:>9} {:>8}  {}\n",
             "row", "system", widths.system, "model", widths.model, "GPUs", "precision", "tp", "pp", "cp",
             "vp", "dp", "fsdp", "published", "predicted", "error", "status");
}

void print_row(const driver::NvidiaRowResult& r, const NameWidths& widths) {
  const auto& row = r.row;
  bool ok = r.status == "ok";
  std::string published = row.published ? fmt::format("{:.0f}", *row.published) : "-";
  std::string predicted = ok ? fmt::format("{:.0f}", r.predicted) : "-";
  std::string error = ok ? fmt::format("{:+.1f}%", r.error_percent) : "-";
  std::string status = ok ? "ok" : r.status + ": " + r.detail;
  if (auto nl = status.find('\n'); nl != std::string::npos) status = status.substr(0, nl);  // one line each
  if (!row.settings.empty()) status += "  [" + driver::settings_text(row) + "]";  // what an ablation changed
  fmt::print("{:>6} {:<{}} {:<{}} {:>5} {:<9} {:>2} {:>2} {:>2} {:>2} {:>4} {:>5} {:>9} {:>9} {:>8}  {}\n",
             row.row_id, row.system, widths.system, row.model, widths.model, cell(row.num_gpus),
             row.precision, cell(row.tp), cell(row.pp), cell(row.cp), cell(row.vp),
             r.dp ? std::to_string(r.dp) : "-", cell(row.fsdp), published, predicted, error, status);
  std::fflush(stdout);  // rows take seconds each: show them as they come
}

void print_summary(const driver::NvidiaValidation& v) {
  std::map<std::string, int> counts;
  for (const auto& r : v.rows) counts[r.status]++;
  std::string others;
  for (const auto& [status, n] : counts)
    if (status != "ok") others += fmt::format(", {} {}", n, status);
  if (v.ok_rows)
    fmt::print("mean |error| {:.1f}%, max |error| {:.1f}% over {} ok rows ({} rows{})\n", v.mean_abs_error,
               v.max_abs_error, v.ok_rows, v.rows.size(), others);
  else
    fmt::print("no row predicted ({} rows{})\n", v.rows.size(), others);
}

}  // namespace

driver::NvidiaValidation run_nvidia_validation(const NvidiaValidateOptions& opt) {
  bool tty = ::isatty(2);
  driver::NvidiaValidationHooks hooks;
  auto widths = std::make_shared<NameWidths>();
  hooks.table_read = [widths](const CsvTable& table, const driver::PresetMapping& mapping) {
    print_header(table, mapping, *widths);
  };
  hooks.row_started = [tty](size_t i, size_t n, const driver::NvidiaRow& row) {
    if (tty)
      fmt::print(stderr, "\r\033[Ksimulating row {}/{} (row_id {}: {} on {} GPUs of {})", i + 1, n,
                 row.row_id, row.model, cell(row.num_gpus), row.system);
  };
  hooks.row_done = [tty, widths](const driver::NvidiaRowResult& r) {
    if (tty) fmt::print(stderr, "\r\033[K");
    print_row(r, *widths);
  };
  auto v = driver::validate_nvidia_table(opt.request, hooks);
  print_summary(v);
  if (!opt.out.empty()) driver::write_nvidia_validation_csv(opt.out, v);
  if (!opt.json.empty()) report::atomic_write(opt.json, driver::nvidia_validation_json(v));
  return v;
}

}  // namespace podsim::cli
