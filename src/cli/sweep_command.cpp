// podsim sweep / podsim merge: what-if studies over any --set key, on one machine or as a Slurm job array.
// The options and what is printed; driver/sweep.hpp runs the study.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "podsim/cli/commands.hpp"
#include "podsim/cli/merge_command.hpp"
#include "podsim/cli/slurm_options.hpp"
#include "podsim/driver/sweep.hpp"
#include "podsim/driver/sweep_output.hpp"

namespace podsim::cli {
namespace {

struct SweepFlags {
  driver::SweepRequest request;
  driver::SlurmSubmission slurm_job;
  bool quiet = false, slurm = false;
};

void submit_to_slurm(SweepFlags& f) {
  f.slurm_job.study_file = f.request.study_file;
  f.slurm_job.out = f.request.out;
  auto done = driver::submit_sweep(f.slurm_job);
  if (done.job_id.empty())
    fmt::print("wrote {} (not submitted)\nsubmit: sbatch {}\nthen:   podsim merge {}\n", done.script,
               done.script, done.out);
  else
    fmt::print("submitted job array {} ({} tasks); when it has finished: podsim merge {}\n", done.job_id,
               done.shards, done.out);
}

void print_sweep(const driver::SweepRun& run) {
  const auto& o = run.outcome;
  fmt::print(
      "{}: {} points: {} simulated, {} do not fit, {} skipped or invalid, {} failed, {} reused from disk\n",
      run.study.name, o.total, o.ran, o.infeasible, o.skipped, o.failed, o.reused);
  fmt::print("{}", driver::results_table_text(run.table, run.study.axis_keys));
  fmt::print("wrote {}{}{}\n", o.results_file, run.report.empty() ? "" : " and ", run.report);
  if (run.options.shards > 1)
    fmt::print("shard {} of {} done; when every shard is: podsim merge {}\n", run.options.shard,
               run.options.shards, run.options.out);
}

void run_sweep_command(SweepFlags& f) {
  if (f.slurm) return submit_to_slurm(f);
  f.request.progress = ::isatty(2) && !f.quiet;
  if (!f.quiet) f.request.note = [](const std::string& what) { fmt::print(stderr, "podsim: {}\n", what); };
  auto run = driver::run_sweep(f.request);
  if (run.outcome.interrupted) {
    fmt::print(stderr, "podsim: interrupted; finished points are in {}.partial.csv; continue with --resume\n",
               study::results_stem(run.options));
    std::exit(128 + run.outcome.signal);
  }
  if (!f.quiet) print_sweep(run);
  if (run.outcome.failed > 0) {  // a bug, not an answer: the sweep must not look successful
    fmt::print(stderr,
               "podsim: {} point(s) failed (status failed in {}: a crash or a physically impossible result, "
               "a bug in podsim; please report it); --resume runs them again\n",
               run.outcome.failed, run.outcome.results_file);
    std::exit(1);
  }
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto opt = std::make_shared<SweepFlags>();
  CLI::App* cmd = app.add_subcommand(
      "sweep", "Run a what-if study (a grid of --set values) and write results.csv and report.html");
  cmd->add_option("study", opt->request.study_file, "Study YAML (workloads/studies/*.yaml)")->required();
  cmd->add_option("--out,-o", opt->request.out, "Results directory")->required();
  cmd->add_option("--jobs,-j", opt->request.jobs,
                  fmt::format("Points simulated at once: 1 to {}, or 0 for one per core (the default)",
                              driver::kMaxSweepJobs));
  cmd->add_flag("--resume", opt->request.resume,
                "Continue an interrupted or edited sweep: keep the rows already in --out of points still in "
                "the study, run the others (and the failed ones) again");
  cmd->add_option("--shard", opt->request.shard,
                  "Run only shard I of N (points with index % N == I); default from "
                  "SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT when set");
  add_slurm_options(*cmd, opt->slurm, opt->slurm_job, "study", "DIR/sweep.sbatch");
  cmd->add_flag("--quiet,-q", opt->quiet, "No progress line and no table");
  cmd->footer(
      "A study names a topology and a workload and axes over any --set key (grid, zip, range) with optional\n"
      "filters; see workloads/studies/. Points run in parallel; each finished point is appended to\n"
      "DIR/results.partial.csv at once, so an interrupted sweep (Ctrl-C, SIGTERM, even SIGKILL) loses "
      "nothing\n"
      "finished and --resume continues it. A point stopped by the interruption is not recorded and runs "
      "again.\n"
      "When all points are done they are sorted into DIR/results.csv (identical whatever --jobs) and\n"
      "DIR/report.html is written. Invalid combinations are recorded with status invalid and the reason,\n"
      "configurations that do not fit with out_of_memory. A point whose simulation crashed or broke an\n"
      "invariant (a bug in podsim) is recorded as failed; the sweep then exits 1, and --resume runs failed\n"
      "points again. One sweep at a time writes a directory (DIR/results.lock); a second one exits 2.\n"
      "On a Slurm cluster: podsim sweep S.yaml --out DIR --slurm (or an array job running\n"
      "'podsim sweep S.yaml --out DIR' per task), then podsim merge DIR.");
  cmd->callback([opt] { run_sweep_command(*opt); });

  add_merge_command(app);
}

}  // namespace podsim::cli
