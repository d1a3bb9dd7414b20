// The search space of `podsim plan` (and of `tp: auto`, `pp: auto`, ... in `podsim run`): a table of
// searchable keys of a transformer_lm workload, each with the values `auto` expands to, and the
// enumeration of every combination that divides, with each skipped combination counted by reason.
//
// The space is a table (kSearchKeys in plan_space.cpp) so that a new parallelism is one entry: the YAML
// key, its values under `auto` given the keys before it, how it sets a WorkloadConfig, and when a value
// is equivalent to another (sequence parallelism with tp 1) so it is not enumerated twice.
#pragma once

#include <boost/container/static_vector.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "podsim/core/config_node.hpp"
#include "podsim/topology/topology.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::driver {

// Everything the auto expansions and checks of one key may read.
struct SpaceContext {
  int devices = 0;           // compute devices of the topology
  int devices_per_node = 1;  // the NVLink domain tensor parallelism stays inside under `auto`
  bool tp_overlap_supported = false;
  bool fabric_tapered = false;     // a GPU cluster whose fat tree tapers (GpuClusterData::tapered)
  bool schedule_explicit = false;  // the file states parallel.schedule: virtual stages follow it
  workload::Schedule schedule = workload::Schedule::one_f_one_b;  // the file's (or the default)
};

struct SearchKey {
  const char* path;  // "parallel.tp"
  // The values `auto` means, given the config with the keys before this one applied.
  std::vector<long long> (*auto_values)(const workload::WorkloadConfig&, const SpaceContext&);
  void (*apply)(workload::WorkloadConfig&, const SpaceContext&, long long);
  // Why this value cannot run with the keys applied so far (nullptr: it can).
  const char* (*check)(const workload::WorkloadConfig&, const SpaceContext&);
  // True when the value behaves exactly like another value of the key (not enumerated twice).
  bool (*redundant)(const workload::WorkloadConfig&, const SpaceContext&, long long);
  std::string (*label)(long long);
  long long (*parse)(const ConfigNode& section, const std::string& key, const YAML::Node& value);
};

const std::vector<SearchKey>& search_keys();

// A candidate's value of each key of its space, in search_keys() order, held inline at 4 bytes each: a
// search keeps every candidate that fits (1.5 million for DeepSeek-V3 on 576 GB200), and as heap vectors
// of 8-byte values they were nearly all of its memory. Every searchable value is a count of ranks,
// stages or micro-batches, or an enum's index; read_space checks the table fits.
inline constexpr size_t kMaxPlanKeys = 24;
using CandidateValues = boost::container::static_vector<std::int32_t, kMaxPlanKeys>;

// One searchable key as the input states it: fixed (one value) or searched (auto or a list).
struct KeyChoice {
  const SearchKey* key = nullptr;
  bool searched = false;
  bool is_auto = false;
  std::vector<long long> values = {};  // the list, or the one fixed value; empty under auto
};

struct Space {
  workload::WorkloadConfig base;  // the workload with every searched key at a neutral value
  ConfigNode root;                // that workload's YAML (for the checks' error messages)
  SpaceContext context;
  std::vector<KeyChoice> keys;  // in search_keys() order
  bool searched() const;        // any key searched
};

// Reads the searchable keys of `root` (overrides applied): `auto` and YAML lists are searched, scalars
// fixed; `search_unstated` also searches every key the file leaves at its default or states as a
// scalar, except those in `fixed` (dotted paths given by --set). A list on a key that cannot be
// searched, an empty list or a bad element is an InputError naming file:line. ConfigNode copies share
// their YAML: the searched keys of `root` are left at their neutral values (reload the file to reuse it).
Space read_space(ConfigNode root, const std::string& file, const topology::Topology& topo,
                 bool search_unstated, const std::vector<std::string>& fixed);

// True when a workload file (overrides applied) has `auto` or a list on a key only the search expands
// (tp, pp, cp, ... but not micro_batch / virtual_stages / dp, which `podsim run` expands itself).
bool needs_search(const ConfigNode& root);

// Reason -> combinations skipped. A combination that fails at an early key counts once there, for
// every setting of the keys after it.
using SkipCounts = std::map<std::string, long long>;

// Calls `visit` with every combination that divides (memory not yet checked): the workload with every key
// resolved (micro_batch and virtual_stages fixed) and the value of each key of the space. Returns the
// number of combinations visited.
using Visitor = std::function<void(const workload::WorkloadConfig&, const CandidateValues&)>;
long long enumerate(const Space& space, const Visitor& visit, SkipCounts& skipped);

// The workload of one combination (what enumerate passed to `visit` for these values).
workload::WorkloadConfig resolve(const Space& space, const CandidateValues& values);

// "tp=8 pp=4 cp=1 ..." for the keys that are searched.
std::string candidate_label(const Space& space, const CandidateValues& values);

}  // namespace podsim::driver
