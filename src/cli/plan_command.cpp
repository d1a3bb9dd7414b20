// podsim plan: search the parallel configuration of a transformer_lm workload on a topology. The options
// and what is printed; driver/plan.hpp runs the search.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>

#include "podsim/cli/commands.hpp"
#include "podsim/cli/job_import_options.hpp"
#include "podsim/cli/slurm_options.hpp"
#include "podsim/driver/plan.hpp"
#include "podsim/driver/plan_output.hpp"
#include "podsim/driver/plan_shards.hpp"
#include "podsim/report/output_files.hpp"

namespace podsim::cli {
namespace {

// What an interrupted search with --out tells the user (built before the search: a signal handler may only
// write it), and the process that says it: the forked workers inherit the handler and stay silent.
char g_interrupted_note[1024];
pid_t g_search_pid = 0;

extern "C" void on_stop_signal(int signal) {
  if (::getpid() == g_search_pid) {
    ssize_t ignored = ::write(2, g_interrupted_note, std::strlen(g_interrupted_note));
    (void)ignored;
  }
  std::signal(signal, SIG_DFL);  // then die of it, as before: the exit status still says which signal
  std::raise(signal);
}

// Ctrl-C, SIGTERM (Slurm, kill) and SIGHUP on a search that journals into `out`: say how to continue.
void note_interruptions(const std::string& out) {
  std::snprintf(g_interrupted_note, sizeof g_interrupted_note,
                "\npodsim: interrupted; every candidate simulated so far is journaled in %s; the same "
                "command with --resume continues the search\n",
                out.c_str());
  g_search_pid = ::getpid();
  for (int s : {SIGINT, SIGTERM, SIGHUP}) std::signal(s, on_stop_signal);
}

}  // namespace

void add_plan_command(CLI::App& app) {
  struct Options {
    driver::PlanRequest request;
    driver::SlurmSubmission slurm_job;
    driver::JobSources imports;  // --hf-config, --megatron-args
    bool quiet = false, slurm = false;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "plan",
      "Find the fastest parallel configuration (tp, pp, dp, cp, ep, ...) of a workload on a topology");
  cmd->add_option("--topology,-t", opt->request.topology_file, "Topology YAML (topologies/*.yaml)")
      ->required();
  cmd->add_option("--workload,-w", opt->request.workload_file,
                  "Workload YAML (workloads/*.yaml); optional with --hf-config / --megatron-args");
  add_job_import_options(*cmd, opt->imports);
  cmd->add_option(
      "--set,-s", opt->request.sets,
      "Override a YAML key (topology. or workload. prefix); a workload key set here stays fixed,\n"
      "e.g. --set workload.parallel.tp=8; a YAML list searches it: --set 'workload.parallel.pp=[4,8]'");
  cmd->add_option("--top", opt->request.options.top, "Rank the best N exactly (default 20)");
  cmd->add_option(
         "--distinct", opt->request.options.distinct,
         "Rank the best N distinct settings of these keys, each at its best setting of the others\n"
         "(comma-separated short names: tp, pp, micro_batch, ...; layout = tp, cp, pp, dp, ep, etp,\n"
         "virtual_stages, micro_batch), e.g. --distinct layout; still exact")
      ->delimiter(',');
  cmd->add_option("--jobs,-j", opt->request.options.jobs,
                  "Candidates simulated at once: worker processes, 0 for one per core (the default)");
  opt->request.options.jobs = 0;
  cmd->add_option("--out,-o", opt->request.out, "Directory for plan.csv");
  cmd->add_flag("--as-written", opt->request.as_written,
                "Keep the keys the workload file states as scalars fixed (only auto and lists are searched)");
  cmd->add_flag("--exhaustive", opt->request.options.exhaustive,
                "Simulate every candidate that fits, not only those whose lower bound can still win");
  cmd->add_flag("--resume", opt->request.resume,
                "Continue a search that was interrupted: the candidates it simulated (DIR/plan.partial.jsonl "
                "in --out) are not simulated again");
  cmd->add_flag("--quiet,-q", opt->quiet, "No progress on stderr");
  cmd->add_option("--shard", opt->request.shard,
                  "Simulate only shard I of N (every N-th candidate in lower-bound order, its own branch and "
                  "bound) into --out DIR/plan.shard-I-of-N.json; default from SLURM_ARRAY_TASK_ID / "
                  "SLURM_ARRAY_TASK_COUNT when set; then podsim merge DIR");
  add_slurm_options(*cmd, opt->slurm, opt->slurm_job, "search", "DIR/plan.sbatch");
  cmd->footer(
      "Every searchable key (parallel.tp, cp, pp, dp, etp, ep, rank_order, cp_algorithm, virtual_stages,\n"
      "sequence_parallel, zero, shard_group, reshard_after_forward, dp_overlap, tp_overlap;\n"
      "training.micro_batch, recompute;\n"
      "moe.dispatcher) is searched\n"
      "unless --set fixes it"
      " (or --as-written keeps the file's value); `auto` or a YAML list in the file\n"
      "searches a key too.\n"
      "Combinations that do not divide or do not fit in device memory (closed-form memory model) are\n"
      "skipped and counted by reason; the rest are simulated in the order of a lower bound on their step\n"
      "time until none left can beat the N-th best (branch and bound): the N best are exact.\n"
      "--distinct layout ranks layouts instead: the N best distinct (tp, cp, pp, dp, ep, etp, virtual\n"
      "stages, micro-batch), each at its best other settings; they are exact too.\n"
      "The table names the keys that differ among its rows; the others are printed once above it.\n"
      "On a Slurm cluster: podsim plan ... --out DIR --slurm [--slurm-shards N], then podsim merge DIR\n"
      "(the merged N best are still exact: each shard bounds its own candidates).\n"
      "With --out DIR each simulated candidate is appended to DIR/plan.partial.jsonl as it finishes, so an\n"
      "interrupted search (Ctrl-C, a Slurm time limit, even SIGKILL) loses none: run the same command with\n"
      "--resume to continue it (the file goes once plan.csv is written).\n"
      "Exit status: 0 on success, 2 on bad input.");
  cmd->callback([opt] {
    apply_job_import(opt->imports, opt->request.workload_file, opt->request.sets, opt->quiet);
    if (opt->slurm) {
      opt->slurm_job.out = opt->request.out;
      auto done = driver::submit_slurm_plan(opt->request, opt->slurm_job);
      if (done.job_id.empty())
        fmt::print("wrote {} ({} shards; not submitted: --dry-run)\n", done.script, done.shards);
      else
        fmt::print("submitted job array {} ({} shards): {}\nwhen it is done: podsim merge {}\n", done.job_id,
                   done.shards, done.script, done.out);
      return;
    }
    if (!opt->request.out.empty()) {
      report::prepare_output_directory(opt->request.out, "--out");
      note_interruptions(opt->request.out);
    }
    bool tty = ::isatty(2) != 0;
    if (!opt->quiet)
      opt->request.options.progress = [tty](const std::string& line) {
        if (tty)
          fmt::print(stderr, "\r\033[K{}", line.substr(0, 150));
        else
          fmt::print(stderr, "{}\n", line);
      };
    auto run = driver::run_plan(opt->request);
    if (tty && !opt->quiet) fmt::print(stderr, "\r\033[K");
    if (run.written.size() == 1 && run.written[0].find("plan.shard-") != std::string::npos) {
      fmt::print(
          "{}: shard done, {} of its candidates simulated; wrote {}\nwhen every shard is: podsim merge "
          "{}\n",
          run.title, run.result.simulated, run.written[0], opt->request.out);
      return;
    }
    fmt::print("{}\n", run.title);
    driver::print_plan(stdout, run.space, run.result, opt->request.options.top);
    for (const auto& f : run.written) fmt::print("wrote {}\n", f);
  });
}

}  // namespace podsim::cli
