// podsim sweep / podsim merge: what-if studies over any --set key, on one machine or as a Slurm job array.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <thread>

#include "podsim/cli/commands.hpp"
#include "podsim/cli/merge_command.hpp"
#include "podsim/cli/sweep_output.hpp"
#include "podsim/cli/sweep_point.hpp"
#include "podsim/cli/sweep_slurm.hpp"
#include "podsim/core/error.hpp"
#include "podsim/study/results.hpp"
#include "podsim/study/study.hpp"
#include "podsim/study/sweep.hpp"

namespace podsim::cli {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxJobs = 1024;

struct SweepFlags {
  std::string study, out, shard, partition;
  int jobs = 0, slurm_shards = 4;
  bool resume = false, quiet = false, slurm = false, dry_run = false;
};

std::pair<int, int> parse_shard(const std::string& text) {
  std::smatch m;
  static const std::regex pattern(R"((\d{1,6})/(\d{1,6}))");
  if (!std::regex_match(text, m, pattern))
    throw InputError(fmt::format("--shard {}: expected I/N with 0 <= I < N, e.g. --shard 2/8", text));
  int i = std::stoi(m[1]), n = std::stoi(m[2]);
  if (n < 1 || i >= n) throw InputError(fmt::format("--shard {}: expected I/N with 0 <= I < N", text));
  return {i, n};
}

int worker_count(int jobs) {
  if (jobs < 0 || jobs > kMaxJobs)
    throw InputError(
        fmt::format("--jobs {}: expected 1 to {} worker processes, or 0 for one per core", jobs, kMaxJobs));
  return jobs > 0 ? jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

study::SweepOptions sweep_options(const SweepFlags& f) {
  study::SweepOptions o;
  o.out = f.out;
  o.jobs = worker_count(f.jobs);
  o.resume = f.resume;
  std::string shard = f.shard;
  if (shard.empty() && std::getenv("SLURM_ARRAY_TASK_ID") && std::getenv("SLURM_ARRAY_TASK_COUNT"))
    shard = fmt::format("{}/{}", std::getenv("SLURM_ARRAY_TASK_ID"), std::getenv("SLURM_ARRAY_TASK_COUNT"));
  if (!shard.empty()) std::tie(o.shard, o.shards) = parse_shard(shard);
  o.progress = ::isatty(2) && !f.quiet;
  if (!f.quiet) o.note = [](const std::string& what) { fmt::print(stderr, "podsim: {}\n", what); };
  return o;
}

void run_sweep_command(const SweepFlags& f) {
  study::Study s = study::load_study(f.study);
  study::check_files_exist(s);  // before anything runs: a wrong path is not N invalid points
  if (f.slurm) {
    fs::create_directories(f.out);
    write_sweep_json(s, f.out);
    submit_slurm_sweep({f.study, f.out, f.partition, f.slurm_shards, f.dry_run});
    return;
  }
  study::SweepOptions o = sweep_options(f);
  o.on_locked = [&] { write_sweep_json(s, o.out); };
  auto outcome = study::run_sweep(s, o, [&s](const study::Point& p) { return run_point(s, p); });
  if (outcome.interrupted) {
    fmt::print(stderr, "podsim: interrupted; finished points are in {}.partial.csv; continue with --resume\n",
               study::results_stem(o));
    std::exit(128 + outcome.signal);
  }
  auto table = study::read_results(outcome.results_file);
  std::string report;
  if (o.shards == 1) report = write_sweep_report(o.out, table, s.name, s.description, s.axis_keys);
  if (!f.quiet) {
    fmt::print(
        "{}: {} points: {} simulated, {} do not fit, {} skipped or invalid, {} failed, {} reused from disk\n",
        s.name, outcome.total, outcome.ran, outcome.infeasible, outcome.skipped, outcome.failed,
        outcome.reused);
    print_results_table(table, s.axis_keys);
    fmt::print("wrote {}{}{}\n", outcome.results_file, report.empty() ? "" : " and ", report);
    if (o.shards > 1)
      fmt::print("shard {} of {} done; when every shard is: podsim merge {}\n", o.shard, o.shards, o.out);
  }
  if (outcome.failed > 0) {  // a bug, not an answer: the sweep must not look successful
    fmt::print(stderr,
               "podsim: {} point(s) failed (status failed in {}: a crash or a physically impossible result, "
               "a bug in podsim; please report it); --resume runs them again\n",
               outcome.failed, outcome.results_file);
    std::exit(1);
  }
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto opt = std::make_shared<SweepFlags>();
  CLI::App* cmd = app.add_subcommand(
      "sweep", "Run a what-if study (a grid of --set values) and write results.csv and report.html");
  cmd->add_option("study", opt->study, "Study YAML (workloads/studies/*.yaml)")->required();
  cmd->add_option("--out,-o", opt->out, "Results directory")->required();
  cmd->add_option(
      "--jobs,-j", opt->jobs,
      fmt::format("Points simulated at once: 1 to {}, or 0 for one per core (the default)", kMaxJobs));
  cmd->add_flag("--resume", opt->resume,
                "Continue an interrupted or edited sweep: keep the rows already in --out of points still in "
                "the study, run the others (and the failed ones) again");
  cmd->add_option("--shard", opt->shard,
                  "Run only shard I of N (points with index % N == I); default from "
                  "SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT when set");
  cmd->add_flag("--slurm", opt->slurm,
                "Submit the study as a Slurm job array (one shard per task), then 'podsim merge'");
  cmd->add_option("--slurm-shards", opt->slurm_shards, "Array tasks for --slurm (default 4)");
  cmd->add_option("--partition", opt->partition, "Slurm partition for --slurm");
  cmd->add_flag("--dry-run", opt->dry_run, "With --slurm: write the sbatch script but do not submit it");
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
