// podsim validate: the options and the printed table; driver/validate.hpp predicts the rows.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "podsim/cli/commands.hpp"
#include "podsim/core/csv_table.hpp"
#include "podsim/driver/validate.hpp"
#include "podsim/report/output_files.hpp"

namespace podsim::cli {

namespace {

struct ValidateOptions {
  std::string table = "validation/megatron-sc21-table1.csv";
  std::string topology = "topologies/dgx-a100-superpod.yaml";
  std::string workload = "workloads/gpt3-175b.yaml";
  std::string out;
  double max_mean_error = 0;
};

void print_table_header(const CsvTable& table) {
  fmt::print("# {}\n", table.file);
  for (const auto& c : table.comments)  // the provenance lines: where the numbers were published
    if (c.find("Narayanan") != std::string::npos || c.find("run_table_1") != std::string::npos)
      fmt::print("#{}\n", c);
  fmt::print("{:>8} {:>6} {:>3} {:>3} {:>4} {:>3} {:>3} {:>10} {:>10} {:>8} {:>9}\n", "params", "GPUs", "tp",
             "pp", "dp", "mb", "v", "published", "predicted", "error", "step(s)");
}

void print_row(const driver::ValidationRow& row) {
  fmt::print("{:>7}B {:>6} {:>3} {:>3} {:>4} {:>3} {:>3} {:>10.1f} {:>10.1f} {:>+7.1f}% {:>9.3f}{}\n",
             row.params_billion, row.gpus, row.tp, row.pp, row.dp, row.micro_batch, row.virtual_stages,
             row.published_tflops, row.predicted_tflops, row.error_percent, row.step_time,
             row.status == "ok" ? "" : "  " + row.status);
  std::fflush(stdout);  // rows take seconds each: show them as they come
}

void run_validate_command(const ValidateOptions& opt) {
  if (!opt.out.empty()) report::prepare_output_directory(opt.out, "--out");  // before the rows run
  driver::ValidationRequest request{find_project_file(opt.table), find_project_file(opt.topology),
                                    find_project_file(opt.workload)};
  bool tty = ::isatty(2);
  driver::ValidationHooks hooks;
  hooks.table_read = print_table_header;
  hooks.row_started = [tty](size_t i, size_t n, const driver::ValidationRow& row) {
    if (tty)
      fmt::print(stderr, "\r\033[Ksimulating row {}/{} ({} B parameters on {} GPUs)", i + 1, n,
                 row.params_billion, row.gpus);
  };
  hooks.row_done = [tty](const driver::ValidationRow& row) {
    if (tty) fmt::print(stderr, "\r\033[K");
    print_row(row);
  };
  auto validation = driver::validate(request, hooks);
  fmt::print("mean |error| {:.1f}%, max |error| {:.1f}% over {} rows\n", validation.mean_abs_error,
             validation.max_abs_error, validation.rows.size());
  if (!opt.out.empty()) driver::write_validation_csv(opt.out, validation);
  if (opt.max_mean_error > 0 && validation.mean_abs_error > opt.max_mean_error) {
    fmt::print(stderr, "podsim: mean |error| {:.1f}% exceeds --max-mean-error {:.1f}%\n",
               validation.mean_abs_error, opt.max_mean_error);
    std::exit(1);
  }
}

}  // namespace

void add_validate_command(CLI::App& app) {
  auto opt = std::make_shared<ValidateOptions>();
  CLI::App* cmd =
      app.add_subcommand("validate", "Predict every row of a published table and print the error");
  cmd->add_option("--table", opt->table, "Validation table (default: Megatron-LM SC21 Table 1)");
  cmd->add_option("--topology", opt->topology, "Topology the table was measured on");
  cmd->add_option("--workload", opt->workload, "Workload file whose keys the rows override");
  cmd->add_option("--out,-o", opt->out, "Directory for validation.csv");
  cmd->add_option("--max-mean-error", opt->max_mean_error,
                  "Exit with status 1 when the mean |error| in percent exceeds this");
  cmd->footer(
      "Each row becomes a podsim run of a GPT model (layers, hidden, heads, seq 2048, vocab 51200) with the\n"
      "row's tensor/pipeline parallelism, GPUs, batch and the authors' published run settings; the "
      "predicted\n"
      "TFLOP/s per GPU (Megatron's Eq. 3 FLOP count) is compared with the published one. No per-row "
      "constants.");
  cmd->callback([opt] { run_validate_command(*opt); });
}

}  // namespace podsim::cli
