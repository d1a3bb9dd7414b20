#include "podsim/driver/validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "podsim/driver/simulation.hpp"
#include "podsim/report/html_validate.hpp"
#include "podsim/report/writers.hpp"

namespace podsim::driver {
namespace {

// The row's parallel geometry, as published.
ValidationRow row_geometry(const CsvTable& table, size_t i) {
  ValidationRow row;
  row.params_billion = table.text(i, "params_billion");
  row.gpus = static_cast<int>(table.number(i, "gpus"));
  row.tp = static_cast<int>(table.number(i, "tensor_parallel"));
  row.pp = static_cast<int>(table.number(i, "pipeline_parallel"));
  row.dp = row.gpus / (row.tp * row.pp);
  row.micro_batch = static_cast<int>(table.number(i, "micro_batch"));
  int layers = static_cast<int>(table.number(i, "layers"));
  if (!table.text(i, "layers_per_virtual_stage").empty())
    row.virtual_stages = layers / row.pp / static_cast<int>(table.number(i, "layers_per_virtual_stage"));
  row.published_tflops = table.number(i, "tflops_per_gpu");
  return row;
}

// A GPT model (seq 2048, vocab 51200) with the row's shape, parallelism, batch and the authors' published
// run settings (fp16, full recompute, scatter-gather, their DDP flavour).
RunRequest row_request(const ValidationRequest& request, const CsvTable& table, size_t i,
                       const ValidationRow& row) {
  double h = table.number(i, "hidden_size");
  bool torch_ddp = table.text(i, "ddp") == "torch";
  int v = row.virtual_stages;
  RunRequest req;
  req.topology_file = request.topology_file;
  req.workload_file = request.workload_file;
  req.sets = {
      fmt::format("topology.nodes={}", (row.gpus + 7) / 8),
      fmt::format("workload.name=GPT {}B", row.params_billion),
      fmt::format("workload.model.layers={}", static_cast<int>(table.number(i, "layers"))),
      fmt::format("workload.model.hidden={}", h),
      fmt::format("workload.model.heads={}", table.number(i, "attention_heads")),
      fmt::format("workload.model.ffn_hidden={}", 4 * h),
      "workload.model.seq_len=2048",
      "workload.model.vocab=51200",
      fmt::format("workload.parallel.tp={}", row.tp),
      fmt::format("workload.parallel.pp={}", row.pp),
      fmt::format("workload.parallel.dp={}", row.dp),
      fmt::format("workload.parallel.schedule={}", v > 1 ? "interleaved" : "1f1b"),
      fmt::format("workload.parallel.virtual_stages={}", v),
      fmt::format("workload.parallel.dp_overlap={}", torch_ddp ? "true" : "false"),
      "workload.parallel.scatter_gather=true",
      fmt::format("workload.training.global_batch={}", table.number(i, "global_batch")),
      fmt::format("workload.training.micro_batch={}", row.micro_batch),
      "workload.training.precision=fp16",
      "workload.training.recompute=full",
      fmt::format("workload.training.grad_accumulation={}", torch_ddp ? "same" : "fp32"),
  };
  return req;
}

}  // namespace

Validation validate(const ValidationRequest& request, const ValidationHooks& hooks) {
  CsvTable table = read_csv(request.table_file);
  if (hooks.table_read) hooks.table_read(table);
  Validation validation;
  double sum_abs = 0;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    ValidationRow row = row_geometry(table, i);
    if (hooks.row_started) hooks.row_started(i, table.rows.size(), row);
    report::RunResult r = simulate(row_request(request, table, i, row));
    row.predicted_tflops = r.ok() ? r.tflops_per_device() : 0;
    row.error_percent = 100 * (row.predicted_tflops - row.published_tflops) / row.published_tflops;
    row.step_time = r.step_time();
    row.status = r.status;
    sum_abs += std::fabs(row.error_percent);
    validation.max_abs_error = std::max(validation.max_abs_error, std::fabs(row.error_percent));
    if (hooks.row_done) hooks.row_done(row);
    validation.rows.push_back(std::move(row));
  }
  if (!table.rows.empty()) validation.mean_abs_error = sum_abs / table.rows.size();
  return validation;
}

void write_validation_csv(const std::string& dir, const Validation& validation) {
  std::vector<report::Row> rows;
  for (const auto& row : validation.rows)
    rows.push_back({{"params_billion", row.params_billion},
                    {"gpus", std::to_string(row.gpus)},
                    {"tp", std::to_string(row.tp)},
                    {"pp", std::to_string(row.pp)},
                    {"micro_batch", std::to_string(row.micro_batch)},
                    {"virtual_stages", std::to_string(row.virtual_stages)},
                    {"published_tflops_per_gpu", fmt::format("{}", row.published_tflops)},
                    {"predicted_tflops_per_gpu", fmt::format("{:.2f}", row.predicted_tflops)},
                    {"error_percent", fmt::format("{:.2f}", row.error_percent)},
                    {"step_time_s", fmt::format("{:.6g}", row.step_time)},
                    {"status", row.status}});
  std::filesystem::create_directories(dir);
  report::atomic_write(dir + "/validation.csv", report::csv(rows));
  report::ValidationReport html{"Megatron-LM SC21 Table 1: predicted against published",
                                "GPT models on DGX A100 (Narayanan et al., SC21, Table 1)",
                                "TFLOP/s per GPU",
                                {}};
  for (const auto& row : validation.rows)
    html.rows.push_back({fmt::format("GPT {}B, {} GPUs, tp {} pp {} dp {} mb {} v {}", row.params_billion,
                                     row.gpus, row.tp, row.pp, row.dp, row.micro_batch, row.virtual_stages),
                         row.published_tflops, row.predicted_tflops, row.error_percent, row.status, ""});
  report::atomic_write(dir + "/validate.html", report::validation_report_html(html));
}

std::string validation_json(const ValidationRequest& request, const Validation& validation) {
  using J = nlohmann::ordered_json;
  J rows = J::array();
  int ok = 0;
  for (size_t i = 0; i < validation.rows.size(); ++i) {
    const auto& row = validation.rows[i];
    bool fits = row.status == "ok";
    ok += fits;
    rows.push_back({{"row_id", std::to_string(i + 1)},
                    {"system", std::filesystem::path(request.topology_file).stem().string()},
                    {"model", fmt::format("GPT {}B", row.params_billion)},
                    {"status", row.status},
                    {"predicted", fits ? J(row.predicted_tflops) : J(nullptr)},
                    {"published", row.published_tflops},
                    {"error_percent", fits ? J(row.error_percent) : J(nullptr)},
                    {"detail", ""},
                    {"step_time_s", fits ? J(row.step_time) : J(nullptr)}});
  }
  // The summary as the text table prints it: over every row (a row that did not fit counts as -100%).
  J j = {{"table", request.table_file},
         {"metric", "tflops_per_gpu"},
         {"rows", rows},
         {"summary",
          {{"rows", validation.rows.size()},
           {"ok_rows", ok},
           {"mean_abs_error_percent", validation.mean_abs_error},
           {"max_abs_error_percent", validation.max_abs_error}}}};
  return j.dump(2) + "\n";
}

}  // namespace podsim::driver
