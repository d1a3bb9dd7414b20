// The journal of a `podsim plan --out DIR` search, so that an interrupted search (Ctrl-C, a Slurm time
// limit or preemption, even SIGKILL) loses none of the candidates it simulated and `--resume` continues it:
//
//   DIR/plan.partial.jsonl   (DIR/plan.shard-I-of-N.partial.jsonl for a shard) a first line naming the
//                            search, then one line per simulated candidate, its label and outcome, appended
//                            as each finishes (one write() per line)
//   DIR/plan.lock            held while the search runs (one search at a time writes a directory)
//
// The first line holds what a candidate's outcome depends on: podsim's version, the SHA-256 of the
// topology, workload and profile files, the --set list and --as-written. --top, --distinct, --exhaustive,
// --jobs and the shard only choose which candidates are simulated, so a resumed search may change them.
// The journal goes once the search's files (plan.csv, or the shard's file) are written.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "podsim/driver/plan.hpp"
#include "podsim/study/output_lock.hpp"
#include "podsim/study/sweep_files.hpp"

namespace podsim::driver {

class PlanJournal {
 public:
  // Opens the journal of `request`'s search in request.out (shard `shard` of `shards`). With
  // request.resume, keeps the candidates an earlier run of the same search recorded (InputError when the
  // journal is another search's, naming what differs); without, InputError when a journal is there.
  PlanJournal(const PlanRequest& request, const topology::Topology& topo, int shard, int shards);
  PlanJournal(const PlanJournal&) = delete;
  PlanJournal& operator=(const PlanJournal&) = delete;

  // The outcome an earlier run recorded for the candidate of this label; nullptr when none (or it failed:
  // a failure is podsim's, or the interruption's, and runs again).
  const SimOutcome* recall(const std::string& label) const;
  // Appends one simulated candidate.
  void record(const std::string& label, const SimOutcome& outcome);
  // The search's files are written: the journal goes.
  void finish();

  const std::string& path() const { return path_; }
  size_t recorded_before() const { return previous_.size(); }

 private:
  std::string path_;
  study::OutputLock lock_;
  std::map<std::string, SimOutcome> previous_;
  std::unique_ptr<study::LineAppender> out_;
};

}  // namespace podsim::driver
