#pragma once
// The files the shards of one sharded run (podsim sweep's results.shard-I-of-N.csv, podsim plan's
// plan.shard-I-of-N.json) left in one or more directories: found by name, checked to be one split and
// complete, so that both merges refuse the same mistakes with the same words.
#include <regex>
#include <string>
#include <vector>

namespace podsim::driver {

struct ShardFilePattern {
  std::regex name;    // two groups: shard index I and shard count N
  std::string shown;  // the name as a person reads it, e.g. "results.shard-I-of-N.csv"
  std::string what;   // "shard" or "plan shard"
  std::string rerun;  // how to rerun a missing shard; "{}" stands for the shard count
};

// One file per shard index (the first found), in directory order; InputError naming the directory when
// one is not a directory, when no shard file is there, when files of different splits meet, and naming
// the missing shards with how to rerun them.
std::vector<std::string> find_shard_files(const std::vector<std::string>& dirs, const ShardFilePattern& p);

}  // namespace podsim::driver
