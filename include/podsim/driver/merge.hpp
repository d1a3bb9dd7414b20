// The merge use case: the shard results of a sweep (a Slurm job array, or --shard runs) joined into one
// results.csv and report.html. `podsim merge` declares the options and prints the outcome.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace podsim::driver {

struct MergeRequest {
  std::vector<std::string> dirs;  // sweep directories holding results.shard-I-of-N.csv files
  std::string out;                // where to write; empty: the first directory
};

struct MergeResult {
  size_t shard_files = 0, points = 0;
  std::string results_file, report;
};

// InputError when a directory is missing, shards are missing or of different splits, or the shards do not
// hold every point the study's sweep.json counts.
MergeResult merge_sweeps(const MergeRequest& request);

}  // namespace podsim::driver
