// Reading the search space of a workload file and enumerating its combinations (plan_space.hpp).
#include "podsim/driver/plan_space.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>

#include "podsim/core/error.hpp"
#include "podsim/topology/families.hpp"
#include "podsim/workload/transformer/transformer_loader.hpp"

namespace podsim::driver {
namespace {

using workload::WorkloadConfig;

// The values a searched key takes in the base workload, in order: the first that the checks of the keys
// held fixed accept (a fixed tp > 1 on a MoE model needs sequence parallelism; a fixed cp > 1 beside a
// sliding window, the all-gather variant). The candidates then take every value one by one.
const std::map<std::string, std::vector<std::string>> kNeutral = {
    {"parallel.tp", {"1"}},
    {"parallel.cp", {"1"}},
    {"parallel.pp", {"1"}},
    {"parallel.dp", {"1"}},
    {"parallel.ep", {"1"}},
    {"moe.dispatcher", {"alltoall", "allgather", "flex"}},
    {"parallel.etp", {"1"}},
    {"parallel.virtual_stages", {"1"}},
    {"training.micro_batch", {"1"}},
    {"training.recompute", {"none", "selective", "full"}},
    {"parallel.sequence_parallel", {"false", "true"}},
    {"parallel.zero", {"0", "1", "2", "3"}},
    {"parallel.shard_group", {"0"}},
    {"parallel.reshard_after_forward", {"true", "false"}},
    {"parallel.dp_overlap", {"true", "false"}},
    {"parallel.tp_overlap", {"false", "true"}},
    {"parallel.rank_order", {"tp-cp-dp-pp", "tp-cp-pp-dp"}},
    {"parallel.cp_algorithm", {"ring", "all_gather"}}};

std::string searched_note(const std::string& path) {
  return fmt::format("plan: {} searched", path);
}

// The searched key whose neutral value a check refused: the error names it by its override's note.
std::string refused_neutral(const std::string& error, const std::vector<KeyChoice>& keys) {
  for (const auto& c : keys)
    if (c.searched && error.find(searched_note(c.key->path) + " ") != std::string::npos) return c.key->path;
  return "";
}

// Keys `podsim run` expands itself under `auto` (driver/simulation.cpp via candidate_settings).
bool run_expands_auto(const std::string& path) {
  return path == "parallel.dp" || path == "training.micro_batch" || path == "parallel.virtual_stages";
}

std::pair<std::string, std::string> split_path(const std::string& path) {
  auto dot = path.find('.');
  return {path.substr(0, dot), path.substr(dot + 1)};
}

const SearchKey* find_key(const std::string& path) {
  for (const auto& k : search_keys())
    if (path == k.path) return &k;
  return nullptr;
}

std::string searchable_list() {
  std::string out;
  for (const auto& k : search_keys()) out += (out.empty() ? "" : ", ") + std::string(k.path);
  return out;
}

// A YAML list or `auto` where a search cannot expand it is an error here rather than a type error later
// (training.attention: auto is the kernel choice the loader makes for the device, not a search).
void reject_lists_elsewhere(const ConfigNode& root) {
  for (const char* section : {"model", "parallel", "training", "moe"}) {
    auto node = root.optional_child(section);
    if (!node || !node->yaml().IsMap()) continue;
    for (const auto& key : node->keys()) {
      std::string path = fmt::format("{}.{}", section, key);
      YAML::Node v = node->yaml()[key];
      bool is_auto = v.IsScalar() && v.Scalar() == "auto" && path != "training.attention";
      // Keys whose value is a list in itself (the layouts to pick from, the modules to recompute).
      bool list_valued = path == "parallel.pipeline_layout" || path == "training.recompute_modules";
      if (((v.IsSequence() && !list_valued) || is_auto) && !find_key(path))
        node->fail(key, fmt::format("{} searches a key, but {} cannot be searched; searchable: {}",
                                    is_auto ? "auto" : "a list", path, searchable_list()));
    }
  }
}

KeyChoice read_choice(const ConfigNode& root, const SearchKey& key, bool search_unstated,
                      const std::vector<std::string>& fixed) {
  auto [section, name] = split_path(key.path);
  KeyChoice c{&key};
  auto node = root.optional_child(section);
  YAML::Node value = node ? node->yaml()[name] : YAML::Node();
  bool is_fixed = std::find(fixed.begin(), fixed.end(), key.path) != fixed.end();
  if (value.IsDefined() && value.IsSequence()) {
    if (value.size() == 0)
      node->fail(name,
                 fmt::format("an empty list: give the values to search, e.g. {}: [1, 2, 4], or auto", name));
    c.searched = true;
    for (const auto& element : value) {
      long long v = key.parse(*node, name, element);
      if (std::find(c.values.begin(), c.values.end(), v) == c.values.end()) c.values.push_back(v);
    }
  } else if (value.IsDefined() && value.IsScalar() && value.Scalar() == "auto") {
    c.searched = c.is_auto = true;
  } else if (search_unstated && !is_fixed) {
    c.searched = c.is_auto = true;
  } else if (!value.IsDefined() && std::string(key.path) == "parallel.dp") {
    c.searched = c.is_auto = true;  // dp left out means all remaining devices, whatever tp, pp and cp are
  }
  return c;
}

struct Walker {
  const Space& space;
  const Visitor& visit;
  SkipCounts& skipped;
  WorkloadConfig w;
  CandidateValues values;
  long long visited = 0;

  void leaf() {
    try {
      workload::validate_transformer_workload(w, space.root, space.context.devices);
    } catch (const InputError& e) {
      std::string what = e.what();
      auto at = what.find(": ");  // drop "file:line: "
      skipped["workload check: " + what.substr(at == std::string::npos ? 0 : at + 2, 160)]++;
      return;
    }
    // The builder's limit on graph size (megatron_builder.cpp), checked before the graph is built.
    double passes = 2 + (w.training.recompute == workload::Recompute::full ? 1 : 0);
    // Userbuffers overlap 4 collectives per pass; without them sequence parallelism's backward runs 4
    // beside its GEMMs (layer_ops.cpp).
    double tp_overlaps = w.parallel.tp_overlap                               ? 4 * passes
                         : w.parallel.sequence_parallel && w.parallel.tp > 1 ? 4
                                                                             : 0;
    double overlaps = tp_overlaps + (w.parallel.cp > 1 ? 3 : 0);
    double m = static_cast<double>(w.training.global_batch) / w.parallel.dp / w.training.micro_batch;
    if ((6.0 + 3 * overlaps) * w.parallel.pp * m * w.parallel.virtual_stages > 5e6) {
      skipped["too many tasks to simulate (> 5e6)"]++;
      return;
    }
    visited++;
    visit(w, values);
  }

  void walk(size_t i) {
    if (i == space.keys.size()) return leaf();
    const KeyChoice& c = space.keys[i];
    const SearchKey& key = *c.key;
    if (!c.searched) {
      // The schedule follows the stage count and virtual stages (plan_keys.cpp) even when both are fixed.
      if (std::string(key.path) == "parallel.virtual_stages")
        key.apply(w, space.context, w.parallel.virtual_stages);
      if (const char* why = key.check(w, space.context)) return void(skipped[why]++);
      return walk(i + 1);
    }
    std::vector<long long> options = c.is_auto ? key.auto_values(w, space.context) : c.values;
    // Each value starts from the keys before this one, the keys after it still at their neutral values
    // (a deeper key's value from the previous branch must not reach this key's checks).
    const WorkloadConfig before = w;
    for (long long v : options) {
      w = before;
      if (key.redundant(w, space.context, v)) continue;
      if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max()) {
        skipped["a value beyond 32 bits"]++;  // no layout of a real machine has one
        continue;
      }
      key.apply(w, space.context, v);
      values[i] = static_cast<std::int32_t>(v);
      if (const char* why = key.check(w, space.context)) {
        skipped[why]++;
        continue;
      }
      walk(i + 1);
    }
    w = before;
  }
};

}  // namespace

bool Space::searched() const {
  return std::any_of(keys.begin(), keys.end(), [](const KeyChoice& c) { return c.searched; });
}

bool needs_search(const ConfigNode& root) {
  for (const auto& key : search_keys()) {
    auto [section, name] = split_path(key.path);
    auto node = root.optional_child(section);
    if (!node) continue;
    YAML::Node v = node->yaml()[name];
    if (v.IsDefined() && v.IsSequence()) return true;
    if (v.IsDefined() && v.IsScalar() && v.Scalar() == "auto" && !run_expands_auto(key.path)) return true;
  }
  return false;
}

Space read_space(ConfigNode root, const std::string& file, const topology::Topology& topo,
                 bool search_unstated, const std::vector<std::string>& fixed) {
  reject_lists_elsewhere(root);
  Space s{.base = {}, .root = root, .context = {}, .keys = {}};
  if (search_keys().size() > kMaxPlanKeys)
    throw std::logic_error("plan: more searchable keys than CandidateValues holds (raise kMaxPlanKeys)");
  for (const auto& key : search_keys()) s.keys.push_back(read_choice(root, key, search_unstated, fixed));
  auto par = root.optional_child("parallel");
  s.context.devices = topo.compute_device_count();
  s.context.devices_per_node = std::max(1, topo.devices_per_node);
  s.context.tp_overlap_supported = workload::userbuffers_supported(topo.device);
  const auto* cluster = topo.family<topology::GpuClusterData>();
  s.context.fabric_tapered = cluster && cluster->tapered;
  s.context.schedule_explicit = par && par->has("schedule");
  if (s.context.schedule_explicit)
    s.context.schedule = *workload::kScheduleNames.parse(par->string("schedule"));
  // A dense model has no moe: section to search in.
  for (auto& c : s.keys)
    if (split_path(c.key->path).first == "moe" && !root.has("moe")) c.searched = c.is_auto = false;
  for (const auto& c : s.keys) {
    if (!c.searched) continue;
    const std::string path = c.key->path;
    root.apply_override(path, kNeutral.at(path).front(), searched_note(path));
    // The interleaved schedule needs pp > 1: the neutral pp 1 runs 1F1B until a candidate sets both.
    if ((path == "parallel.pp" || path == "parallel.virtual_stages") && s.context.schedule_explicit)
      root.apply_override("parallel.schedule", "1f1b", "plan: schedule follows virtual_stages");
  }
  auto searched = [&](const std::string& path) {
    return std::any_of(s.keys.begin(), s.keys.end(),
                       [&](const auto& c) { return c.searched && path == c.key->path; });
  };
  // training.recompute_modules says what `selective` recomputes: the base is read with it (the file's list
  // is checked once), and the candidates with recompute none or full leave it unused.
  auto train = root.optional_child("training");
  if (searched("training.recompute") && train && train->has("recompute_modules"))
    root.apply_override("training.recompute", "selective", "plan: recompute_modules read for selective");
  // Combined 1F1B's checks need the searched keys' values (ep > 1, virtual stages when pipelined): the base
  // is read without it, and each candidate is checked with it (Walker::leaf).
  auto moe = root.optional_child("moe");
  bool combined = moe && moe->has("overlap") && moe->string("overlap") == "combined_1f1b" &&
                  std::any_of(s.keys.begin(), s.keys.end(), [](const auto& c) { return c.searched; });
  if (combined) root.apply_override("moe.overlap", "none", "plan: combined_1f1b checked per candidate");
  // A fixed ep or etp must divide tp*cp*dp, which the base, read with the searched ones at their neutral 1,
  // does not have yet: read it with 1 and give it back its fixed value; every candidate is checked with it
  // (check_expert).
  std::map<std::string, long long> held;
  if (par && root.has("moe") &&
      (searched("parallel.tp") || searched("parallel.cp") || searched("parallel.dp")))
    for (const char* key : {"ep", "etp"})
      if (!searched(std::string("parallel.") + key) && par->has(key)) {
        held[key] = par->positive_integer(key);
        root.apply_override(std::string("parallel.") + key, "1", "plan: checked per candidate");
      }
  std::map<std::string, size_t> neutral;  // searched key -> which of its kNeutral values the base has
  for (std::optional<InputError> first;;) {
    try {
      s.base = workload::read_transformer_on(root, file, topo);
      break;
    } catch (const InputError& e) {
      if (!first) first = e;
      std::string path = refused_neutral(e.what(), s.keys);
      if (path.empty() || ++neutral[path] >= kNeutral.at(path).size()) throw *first;
      root.apply_override(path, kNeutral.at(path)[neutral[path]], searched_note(path));
    }
  }
  for (const auto& [key, value] : held) {
    (key == "ep" ? s.base.parallel.ep : s.base.parallel.etp) = static_cast<int>(value);
    root.apply_override("parallel." + key, std::to_string(value), "plan: checked per candidate");
  }
  if (combined) {
    s.base.moe.overlap = workload::MoeOverlap::combined_1f1b;
    root.apply_override("moe.overlap", "combined_1f1b", "plan: combined_1f1b checked per candidate");
  }
  // A dense model has no expert parallelism to search: ep and etp stay at their (checked) 1.
  for (auto& c : s.keys)
    if (!s.base.moe.enabled() && c.is_auto &&
        (std::string(c.key->path) == "parallel.ep" || std::string(c.key->path) == "parallel.etp"))
      c.searched = c.is_auto = false;
  s.root = root;
  return s;
}

long long enumerate(const Space& space, const Visitor& visit, SkipCounts& skipped) {
  Walker walker{space, visit, skipped, space.base, CandidateValues(space.keys.size(), 0)};
  walker.walk(0);
  return walker.visited;
}

WorkloadConfig resolve(const Space& space, const CandidateValues& values) {
  WorkloadConfig w = space.base;
  for (size_t i = 0; i < space.keys.size(); ++i)
    if (space.keys[i].searched)
      space.keys[i].key->apply(w, space.context, values[i]);
    else if (std::string(space.keys[i].key->path) == "parallel.virtual_stages")
      space.keys[i].key->apply(w, space.context, w.parallel.virtual_stages);
  return w;
}

std::string candidate_label(const Space& space, const CandidateValues& values) {
  std::string out;
  for (size_t i = 0; i < space.keys.size(); ++i) {
    if (!space.keys[i].searched) continue;
    auto [section, name] = split_path(space.keys[i].key->path);
    out += fmt::format("{}{}={}", out.empty() ? "" : " ", name, space.keys[i].key->label(values[i]));
  }
  return out;
}

}  // namespace podsim::driver
