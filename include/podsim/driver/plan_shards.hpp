// `podsim plan` over a Slurm job array (or `--shard I/N` runs by hand): each shard simulates its share of
// the candidates with a branch and bound of its own (PlanOptions::shard) and writes
// DIR/plan.shard-I-of-N.json; `podsim merge DIR` joins them into plan.csv and plan.html, whose k best are
// exactly the k best of the whole space.
#pragma once

#include <string>
#include <vector>

#include "podsim/driver/plan.hpp"
#include "podsim/driver/slurm_submit.hpp"

namespace podsim::driver {

// DIR/plan for a whole search, DIR/plan.shard-I-of-N for a shard: the stem of its files (.json, the
// journal's .partial.jsonl, .lock).
std::string plan_file_stem(const std::string& dir, int shard, int shards);

// Writes DIR/plan.shard-I-of-N.json: the request (so that merge can rebuild the space), the search's
// counts and every row of this shard with its bound and outcome. Returns the file written.
std::string write_plan_shard(const std::string& dir, const PlanRequest& request, const PlanResult& result);

// Whether DIR holds plan shard files (merge then joins a plan, not a sweep).
bool has_plan_shards(const std::string& dir);

// Joins the shard files of `dirs` (every shard of one split, of one request: InputError otherwise) and
// writes plan.csv and plan.html into `out` (default: the first directory).
PlanRun merge_plan_shards(const std::vector<std::string>& dirs, const std::string& out);

// `podsim plan --slurm`: checks the request as run_plan does (nothing is simulated), writes DIR/plan.sbatch
// and submits it unless job.dry_run.
SlurmSubmitted submit_slurm_plan(const PlanRequest& request, const SlurmSubmission& job);

}  // namespace podsim::driver
