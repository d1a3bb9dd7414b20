#include "podsim/driver/sweep.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <thread>

#include "podsim/core/error.hpp"
#include "podsim/driver/sweep_output.hpp"
#include "podsim/driver/sweep_point.hpp"
#include "podsim/report/output_files.hpp"

namespace podsim::driver {
namespace {

int worker_count(int jobs) {
  if (jobs < 0 || jobs > kMaxSweepJobs)
    throw InputError(fmt::format("--jobs {}: expected 1 to {} worker processes, or 0 for one per core", jobs,
                                 kMaxSweepJobs));
  return jobs > 0 ? jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

study::SweepOptions sweep_options(const SweepRequest& r) {
  study::SweepOptions o;
  o.out = r.out;
  o.jobs = worker_count(r.jobs);
  o.resume = r.resume;
  std::string shard = r.shard;
  // A task of a Slurm job array (sweep.sbatch, or the user's own) runs its shard without being told.
  if (shard.empty() && std::getenv("SLURM_ARRAY_TASK_ID") && std::getenv("SLURM_ARRAY_TASK_COUNT"))
    shard = fmt::format("{}/{}", std::getenv("SLURM_ARRAY_TASK_ID"), std::getenv("SLURM_ARRAY_TASK_COUNT"));
  if (!shard.empty()) std::tie(o.shard, o.shards) = parse_shard(shard);
  o.progress = r.progress;
  o.note = r.note;
  return o;
}

}  // namespace

std::pair<int, int> parse_shard(const std::string& text) {
  std::smatch m;
  static const std::regex pattern(R"((\d{1,6})/(\d{1,6}))");
  if (!std::regex_match(text, m, pattern))
    throw InputError(fmt::format("--shard {}: expected I/N with 0 <= I < N, e.g. --shard 2/8", text));
  int i = std::stoi(m[1]), n = std::stoi(m[2]);
  if (n < 1 || i >= n) throw InputError(fmt::format("--shard {}: expected I/N with 0 <= I < N", text));
  return {i, n};
}

SweepRun run_sweep(const SweepRequest& request) {
  SweepRun run;
  run.study = study::load_study(request.study_file);
  const study::Study& s = run.study;
  study::check_files_exist(s);
  report::prepare_output_directory(request.out, "--out");  // before any point runs, not halfway
  run.options = sweep_options(request);
  run.options.on_locked = [&] { write_sweep_json(s, run.options.out); };
  run.outcome = study::run_sweep(s, run.options, [&s](const study::Point& p) { return run_point(s, p); });
  if (run.outcome.interrupted) return run;
  run.table = study::read_results(run.outcome.results_file);
  if (run.options.shards == 1)
    run.report =
        write_sweep_report(run.options.out, run.table, s.name, s.description, s.axis_keys, s.baseline);
  return run;
}

SlurmSubmitted submit_sweep(const SlurmSubmission& job) {
  study::Study s = study::load_study(job.study_file);
  study::check_files_exist(s);
  report::prepare_output_directory(job.out, "--out");
  write_sweep_json(s, job.out);
  return submit_slurm_sweep(job);
}

}  // namespace podsim::driver
