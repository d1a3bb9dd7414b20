// podsim validate: the options and the printed table; driver/validate.hpp predicts the rows.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "podsim/cli/commands.hpp"
#include "podsim/cli/validate_nvidia.hpp"
#include "podsim/core/csv_table.hpp"
#include "podsim/core/error.hpp"
#include "podsim/driver/validate.hpp"
#include "podsim/report/output_files.hpp"

namespace podsim::cli {

namespace {

struct ValidateOptions {
  std::string table = "validation/megatron-sc21-table1.csv";
  std::string topology = "topologies/dgx-a100-superpod.yaml";
  std::string workload = "workloads/gpt3-175b.yaml";
  std::string mapping = "validation/nvidia-presets.yaml";
  std::string out, json;
  std::vector<std::string> systems, rows;
  bool topology_given = false, workload_given = false;
  double max_mean_error = 0;
};

void check_max_mean_error(const ValidateOptions& opt, double mean_abs_error) {
  if (opt.max_mean_error > 0 && mean_abs_error > opt.max_mean_error) {
    fmt::print(stderr, "podsim: mean |error| {:.1f}% exceeds --max-mean-error {:.1f}%\n", mean_abs_error,
               opt.max_mean_error);
    std::exit(1);
  }
}

// A table in NVIDIA's schema: the mapping file names the presets; --topology/--workload do not apply.
void run_nvidia(const ValidateOptions& opt, const std::string& table) {
  if (opt.topology_given || opt.workload_given)
    throw InputError(
        fmt::format("--topology/--workload: {} is in NVIDIA's schema, whose rows name their system "
                    "and model; {} maps them to presets",
                    table, opt.mapping));
  NvidiaValidateOptions nv;
  nv.request.table_file = table;
  nv.request.mapping_file = find_project_file(opt.mapping);
  nv.request.systems = {opt.systems.begin(), opt.systems.end()};
  nv.request.row_ids = {opt.rows.begin(), opt.rows.end()};
  nv.out = opt.out;
  nv.json = opt.json;
  auto v = run_nvidia_validation(nv);
  check_max_mean_error(opt, v.mean_abs_error);
}

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
  std::string table = find_project_file(opt.table);
  if (driver::detect_schema(read_csv(table)) == driver::TableSchema::nvidia) return run_nvidia(opt, table);
  if (!opt.systems.empty() || !opt.rows.empty())
    throw InputError(
        fmt::format("--system/--rows select rows of a table in NVIDIA's schema; {} is the "
                    "Megatron SC21 schema, whose rows are all predicted",
                    table));
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
  if (!opt.json.empty()) report::atomic_write(opt.json, driver::validation_json(request, validation));
  check_max_mean_error(opt, validation.mean_abs_error);
}

}  // namespace

void add_validate_command(CLI::App& app) {
  auto opt = std::make_shared<ValidateOptions>();
  CLI::App* cmd =
      app.add_subcommand("validate", "Predict every row of a published table and print the error");
  cmd->add_option("--table", opt->table,
                  "Validation table: Megatron-LM SC21 Table 1 (default) or a table in NVIDIA's schema "
                  "(validation/nvidia-pretraining-h100-b200.csv)");
  auto* topology =
      cmd->add_option("--topology", opt->topology, "Topology the table was measured on (SC21 schema)");
  auto* workload = cmd->add_option("--workload", opt->workload,
                                   "Workload file whose keys the rows override (SC21 schema)");
  cmd->add_option("--mapping", opt->mapping,
                  "Systems and models to presets, and recipe settings (NVIDIA schema)");
  cmd->add_option("--system", opt->systems, "Only rows of this system, e.g. DGX-H100 (NVIDIA schema)")
      ->delimiter(',');
  cmd->add_option("--rows", opt->rows, "Only these row_ids, comma-separated (NVIDIA schema)")->delimiter(',');
  cmd->add_option("--out,-o", opt->out, "Directory for validation.csv and validate.html");
  cmd->add_option("--json", opt->json, "Write one JSON object per row (and the summary) to this file");
  cmd->add_option("--max-mean-error", opt->max_mean_error,
                  "Exit with status 1 when the mean |error| in percent exceeds this");
  cmd->footer(
      "Each row becomes a podsim run of a GPT model (layers, hidden, heads, seq 2048, vocab 51200) with the\n"
      "row's tensor/pipeline parallelism, GPUs, batch and the authors' published run settings; the "
      "predicted\n"
      "TFLOP/s per GPU (Megatron's Eq. 3 FLOP count) is compared with the published one. No per-row "
      "constants.\n"
      "A table in NVIDIA's schema (system, model, num_gpus, precision, gbs, mbs, seq_len, fsdp, tp, pp, cp, "
      "vp,\n"
      "ep, tokens_per_sec_per_gpu) is mapped to presets by --mapping; each row's predicted tokens/s per GPU "
      "is\n"
      "compared with the published one, and a row podsim cannot express is listed with the reason. An\n"
      "optional settings column (\"moe.dispatcher=alltoall; moe.overlap=combined_1f1b\") changes workload "
      "keys\n"
      "of the row's recipe: tables of ablations, one setting changed per measured run.");
  cmd->callback([opt, topology, workload] {
    opt->topology_given = topology->count() > 0;
    opt->workload_given = workload->count() > 0;
    run_validate_command(*opt);
  });
}

}  // namespace podsim::cli
