// Runs a study's points in parallel worker processes and streams their rows to disk as they finish.
#pragma once

#include <functional>
#include <string>

#include "podsim/study/results.hpp"
#include "podsim/study/study.hpp"

namespace podsim::study {

struct SweepOptions {
  std::string out;      // results directory
  int jobs = 1;         // points simulated at once
  bool resume = false;  // skip points whose rows are already on disk
  int shard = 0;        // this process runs the points with index % shards == shard
  int shards = 1;
  bool progress = true;  // progress line on stderr (the caller turns it off when stderr is not a terminal)
};

struct SweepOutcome {
  int total = 0;       // points in this shard
  int ran = 0;         // simulated now
  int infeasible = 0;  // valid but cannot run (out of memory)
  int reused = 0;      // found on disk (--resume)
  int skipped = 0;     // filtered out or invalid
  int failed = 0;
  bool interrupted = false;
  std::string results_file;  // complete, sorted file ("" when interrupted)
};

// Runs one point and returns its row. Called in a forked child process; must not throw.
using PointRunner = std::function<ResultRow(const Point&)>;

// File names of shard `shard` of `shards` in `out` ("results" when there is one shard).
std::string results_stem(const SweepOptions& options);

SweepOutcome run_sweep(const Study& study, const SweepOptions& options, const PointRunner& runner);

}  // namespace podsim::study
