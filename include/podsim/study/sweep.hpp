// Runs a study's points in parallel worker processes and streams their rows to disk as they finish.
//
// What a sweep guarantees (tests/sweep_kill.sh kills sweeps to check it):
// - One sweep at a time per results file: `<stem>.lock` in --out is held (flock) while a sweep runs, and a
//   second sweep into the same directory and shard is refused at once (InputError, exit 2).
// - Nothing finished is lost: each finished point is appended to `<stem>.partial.csv` as one whole line with
//   one write(). A kill at any moment leaves at most a torn last line, which resume ignores.
// - Only results are kept. A point whose worker was stopped by a signal from outside (SIGINT, SIGTERM,
// SIGHUP,
//   or any signal while the sweep itself is being interrupted) is not recorded: `--resume` runs it again. A
//   worker that crashed on its own (SIGSEGV, SIGABRT, SIGKILL from the out-of-memory killer, ...) or whose
//   simulation threw (InvariantViolation: a physically impossible result) is a real failure, recorded with
//   status `failed` and the reason; `failed` (and the older `error`) rows are not results either, so
//   `--resume` runs those points again too.
// - Resume keeps the last complete row of each point (duplicates from a kill mid-compaction are harmless),
//   drops rows of points that are no longer in the study (said through `note`), and writes results.csv
//   with exactly one row per point, in point order, byte-identical whatever the workers and interruptions.
#pragma once

#include <functional>
#include <string>

#include "podsim/study/results.hpp"
#include "podsim/study/study.hpp"

namespace podsim::study {

struct SweepOptions {
  std::string out;      // results directory
  int jobs = 1;         // points simulated at once (>= 1)
  bool resume = false;  // skip points whose rows are already on disk
  int shard = 0;        // this process runs the points with index % shards == shard
  int shards = 1;
  bool progress = true;  // progress line on stderr (the caller turns it off when stderr is not a terminal)
  // Messages for the user about what resume did (rows dropped, points rerun); empty: not shown.
  std::function<void(const std::string&)> note;
  // Called once the output lock is held, before any point runs (the CLI writes sweep.json there).
  std::function<void()> on_locked;
};

struct SweepOutcome {
  int total = 0;       // points in this shard
  int ran = 0;         // simulated now
  int infeasible = 0;  // valid but cannot run (out of memory)
  int reused = 0;      // found on disk (--resume)
  int skipped = 0;     // filtered out or invalid
  int failed = 0;      // status failed: a crash or a broken invariant (a bug in podsim)
  int dropped = 0;     // rows on disk of points no longer in the study (--resume), left out
  bool interrupted = false;
  int signal = 0;            // the signal that interrupted the sweep
  std::string results_file;  // complete, sorted file ("" when interrupted)
};

// Runs one point and returns its row. Called in a forked child process; an exception it throws becomes a
// `failed` row.
using PointRunner = std::function<ResultRow(const Point&)>;

// File names of shard `shard` of `shards` in `out` ("results" when there is one shard).
std::string results_stem(const SweepOptions& options);

// Throws InputError for bad options (jobs < 1, a shard outside 0..shards-1) and when another sweep holds
// the directory's lock; std::runtime_error when files cannot be written.
SweepOutcome run_sweep(const Study& study, const SweepOptions& options, const PointRunner& runner);

}  // namespace podsim::study
