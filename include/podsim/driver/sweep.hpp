// The sweep use case: a study's points simulated in parallel (or one shard of them, or submitted to Slurm),
// then results.csv, sweep.json and report.html written. `podsim sweep` declares the options and prints.
#pragma once

#include <string>

#include "podsim/driver/simulation.hpp"
#include "podsim/driver/slurm_submit.hpp"
#include "podsim/study/results.hpp"
#include "podsim/study/study.hpp"
#include "podsim/study/sweep.hpp"

namespace podsim::driver {

constexpr int kMaxSweepJobs = 1024;

struct SweepRequest {
  std::string study_file, out;
  int jobs = 0;       // worker processes: 1..kMaxSweepJobs, 0 for one per core
  std::string shard;  // "I/N"; empty: SLURM_ARRAY_TASK_ID/COUNT when set, else the whole study
  bool resume = false;
  bool progress = false;  // the progress line on stderr
  Progress note;          // what resume did (rows dropped, points rerun); empty: not said
};

struct SweepRun {
  study::Study study;
  study::SweepOptions options;  // as resolved: jobs, shard and shards
  study::SweepOutcome outcome;
  study::ResultsTable table;  // results_file read back (empty when interrupted)
  std::string report;         // report.html, written only for an unsharded sweep
};

// "I/N" with 0 <= I < N; InputError naming --shard otherwise.
std::pair<int, int> parse_shard(const std::string& text);

// Loads the study, checks its files exist (a wrong path is not N invalid points), runs it. Bad input throws
// InputError; an interrupted sweep returns with outcome.interrupted and nothing else filled in.
SweepRun run_sweep(const SweepRequest& request);

// The study as a Slurm job array: checks it as run_sweep does, writes DIR/sweep.json and DIR/sweep.sbatch
// and submits it (job.study_file is the study).
SlurmSubmitted submit_sweep(const SlurmSubmission& job);

}  // namespace podsim::driver
