#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "podsim/cli/commands.hpp"
#include "podsim/cli/simulation.hpp"
#include "podsim/core/csv_table.hpp"
#include "podsim/report/writers.hpp"

namespace podsim::cli {

void add_validate_command(CLI::App& app) {
  struct Options {
    std::string table = "validation/megatron-sc21-table1.csv";
    std::string topology = "topologies/dgx-a100-superpod.yaml";
    std::string workload = "workloads/gpt3-175b.yaml";
    std::string out;
    double max_mean_error = 0;
  };
  auto opt = std::make_shared<Options>();
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
  cmd->callback([opt] {
    if (!opt->out.empty()) report::prepare_output_directory(opt->out, "--out");  // before the rows run
    CsvTable table = read_csv(find_project_file(opt->table));
    std::string topology = find_project_file(opt->topology), workload = find_project_file(opt->workload);
    std::printf("# %s\n", table.file.c_str());
    for (const auto& c : table.comments)
      if (c.find("Narayanan") != std::string::npos || c.find("run_table_1") != std::string::npos)
        std::printf("#%s\n", c.c_str());
    std::printf("%8s %6s %3s %3s %4s %3s %3s %10s %10s %8s %9s\n", "params", "GPUs", "tp", "pp", "dp", "mb",
                "v", "published", "predicted", "error", "step(s)");
    std::vector<report::Row> rows;
    double sum_abs = 0, max_abs = 0;
    bool tty = ::isatty(2);
    for (size_t i = 0; i < table.rows.size(); ++i) {
      double h = table.number(i, "hidden_size");
      int tp = static_cast<int>(table.number(i, "tensor_parallel"));
      int pp = static_cast<int>(table.number(i, "pipeline_parallel"));
      int gpus = static_cast<int>(table.number(i, "gpus"));
      int layers = static_cast<int>(table.number(i, "layers"));
      int mb = static_cast<int>(table.number(i, "micro_batch"));
      std::string lpvs = table.text(i, "layers_per_virtual_stage");
      int v = lpvs.empty() ? 1 : layers / pp / static_cast<int>(table.number(i, "layers_per_virtual_stage"));
      bool torch_ddp = table.text(i, "ddp") == "torch";
      RunRequest req;
      req.topology_file = topology;
      req.workload_file = workload;
      req.sets = {
          fmt::format("topology.nodes={}", (gpus + 7) / 8),
          fmt::format("workload.name=GPT {}B", table.text(i, "params_billion")),
          fmt::format("workload.model.layers={}", layers),
          fmt::format("workload.model.hidden={}", h),
          fmt::format("workload.model.heads={}", table.number(i, "attention_heads")),
          fmt::format("workload.model.ffn_hidden={}", 4 * h),
          "workload.model.seq_len=2048",
          "workload.model.vocab=51200",
          fmt::format("workload.parallel.tp={}", tp),
          fmt::format("workload.parallel.pp={}", pp),
          fmt::format("workload.parallel.dp={}", gpus / (tp * pp)),
          fmt::format("workload.parallel.schedule={}", v > 1 ? "interleaved" : "1f1b"),
          fmt::format("workload.parallel.virtual_stages={}", v),
          fmt::format("workload.parallel.dp_overlap={}", torch_ddp ? "true" : "false"),
          "workload.parallel.scatter_gather=true",
          fmt::format("workload.training.global_batch={}", table.number(i, "global_batch")),
          fmt::format("workload.training.micro_batch={}", mb),
          "workload.training.precision=fp16",
          "workload.training.recompute=full",
          fmt::format("workload.training.grad_accumulation={}", torch_ddp ? "same" : "fp32"),
      };
      if (tty)
        std::fprintf(stderr, "\r\033[Ksimulating row %zu/%zu (%s B parameters on %d GPUs)", i + 1,
                     table.rows.size(), table.text(i, "params_billion").c_str(), gpus);
      report::RunResult r = simulate(req);
      if (tty) std::fprintf(stderr, "\r\033[K");
      double published = table.number(i, "tflops_per_gpu");
      double predicted = r.ok() ? r.tflops_per_device() : 0;
      double error = 100 * (predicted - published) / published;
      sum_abs += std::fabs(error);
      max_abs = std::max(max_abs, std::fabs(error));
      std::printf("%7sB %6d %3d %3d %4d %3d %3d %10.1f %10.1f %+7.1f%% %9.3f%s\n",
                  table.text(i, "params_billion").c_str(), gpus, tp, pp, gpus / (tp * pp), mb, v, published,
                  predicted, error, r.step_time(), r.status == "ok" ? "" : ("  " + r.status).c_str());
      std::fflush(stdout);
      rows.push_back({{"params_billion", table.text(i, "params_billion")},
                      {"gpus", std::to_string(gpus)},
                      {"tp", std::to_string(tp)},
                      {"pp", std::to_string(pp)},
                      {"micro_batch", std::to_string(mb)},
                      {"virtual_stages", std::to_string(v)},
                      {"published_tflops_per_gpu", fmt::format("{}", published)},
                      {"predicted_tflops_per_gpu", fmt::format("{:.2f}", predicted)},
                      {"error_percent", fmt::format("{:.2f}", error)},
                      {"step_time_s", fmt::format("{:.6g}", r.step_time())},
                      {"status", r.status}});
    }
    double mean = table.rows.empty() ? 0 : sum_abs / table.rows.size();
    std::printf("mean |error| %.1f%%, max |error| %.1f%% over %zu rows\n", mean, max_abs, table.rows.size());
    if (!opt->out.empty())
      report::atomic_write((std::filesystem::path(opt->out) / "validation.csv").string(), report::csv(rows));
    if (opt->max_mean_error > 0 && mean > opt->max_mean_error) {
      std::fprintf(stderr, "podsim: mean |error| %.1f%% exceeds --max-mean-error %.1f%%\n", mean,
                   opt->max_mean_error);
      std::exit(1);
    }
  });
}

}  // namespace podsim::cli
