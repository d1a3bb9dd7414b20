#include "podsim/driver/preset_mapping.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "podsim/core/config_node.hpp"
#include "podsim/core/error.hpp"

namespace podsim::driver {
namespace {

// Keys every row sets from its own columns: a recipe that set them would be overwritten silently.
const std::vector<std::string> kRowKeys = {
    "parallel.tp",          "parallel.pp",           "parallel.dp",
    "parallel.cp",          "parallel.schedule",     "parallel.virtual_stages",
    "parallel.shard_group", "training.global_batch", "training.micro_batch",
    "training.precision",   "model.seq_len",         "parallel.ep"};

std::string resolve(const std::string& mapping_file, const std::string& path) {
  if (std::filesystem::path(path).is_absolute()) return path;
  return (std::filesystem::path(mapping_file).parent_path() / path).lexically_normal().string();
}

// `key: preset path` or `key: null` with a `reason:` beside it.
PresetEntry read_entry(const ConfigNode& entry, const std::string& file_key, const std::string& mapping) {
  PresetEntry e;
  e.where = entry.where(file_key);
  const YAML::Node& node = entry.yaml();
  if (!node.IsMap() || !node[file_key].IsDefined())
    entry.fail(file_key, "required: a preset path, or null with a reason");
  if (node[file_key].IsNull()) {
    entry.optional_child(file_key);  // marks the key as read: null reads as absent
    e.reason = entry.string("reason");
  } else {
    e.file = resolve(mapping, entry.string(file_key));
    e.reason = entry.string_or("reason", "");
  }
  return e;
}

std::vector<std::string> read_sets(const ConfigNode& set);

std::vector<int> read_release(const ConfigNode& older, const std::string& release) {
  auto parts = release_parts(release);
  if (!parts)
    older.fail(release,
               fmt::format("'{}' is not a release as the table prints it (e.g. 25.11 or 26.02.01)", release));
  return *parts;
}

void read_systems(const ConfigNode& root, PresetMapping& m) {
  ConfigNode systems = root.child("systems");
  for (const auto& name : systems.keys()) {
    ConfigNode entry = systems.child(name);
    PresetEntry e = read_entry(entry, "topology", m.file);
    if (auto older = entry.optional_child("before_release")) {
      for (const auto& release : older->keys())
        e.before_release.push_back({read_release(*older, release), read_sets(older->child(release))});
      std::stable_sort(e.before_release.begin(), e.before_release.end(),
                       [](const auto& a, const auto& b) { return a.parts > b.parts; });
    }
    entry.reject_unknown_keys();
    m.systems[name] = e;
  }
}

void read_models(const ConfigNode& root, PresetMapping& m) {
  ConfigNode models = root.child("models");
  for (const auto& name : models.keys()) {
    ConfigNode entry = models.child(name);
    PresetEntry e = read_entry(entry, "workload", m.file);
    if (!e.file.empty()) {
      e.recipe = entry.string("recipe");
      if (!m.recipes.count(e.recipe))
        entry.fail("recipe", fmt::format("recipe '{}' is not defined under recipes:", e.recipe));
    }
    entry.reject_unknown_keys();
    m.models[name] = e;
  }
}

std::vector<std::string> read_sets(const ConfigNode& set) {
  std::vector<std::string> out;
  for (const auto& key : set.keys()) {
    if (std::string why = settable_key_problem(key); !why.empty()) set.fail(key, "a recipe " + why);
    out.push_back(fmt::format("workload.{}={}", key, set.at(key).as_string()));
  }
  return out;
}

// A recipe: `set` (and `set_on` per system), after those of its `base` recipe (defined above it) when it
// names one, so a model that differs from its family in a few settings states only those.
Recipe read_recipe(const ConfigNode& node, const std::map<std::string, Recipe>& earlier) {
  Recipe r;
  if (node.has("base")) {
    std::string base = node.string("base");
    auto it = earlier.find(base);
    if (it == earlier.end())
      node.fail("base", fmt::format("recipe '{}' is not defined above this one", base));
    r = it->second;
  }
  r.source = node.string("source");
  if (auto set = node.optional_child("set")) {
    auto own = read_sets(*set);
    r.sets.insert(r.sets.end(), own.begin(), own.end());
  } else if (!node.has("base")) {
    node.fail("set", "required: the recipe's settings (or a base recipe)");
  }
  if (auto on = node.optional_child("set_on"))
    for (const auto& system : on->keys()) {
      auto own = read_sets(on->child(system));
      auto& sets = r.system_sets[system];
      sets.insert(sets.end(), own.begin(), own.end());
    }
  if (auto older = node.optional_child("before_release")) {
    for (const auto& release : older->keys()) {
      Recipe::OlderRelease o{.parts = read_release(*older, release), .system_sets = {}};
      ConfigNode systems = older->child(release);
      for (const auto& system : systems.keys()) o.system_sets[system] = read_sets(systems.child(system));
      r.before_release.push_back(std::move(o));
    }
    std::stable_sort(r.before_release.begin(), r.before_release.end(),
                     [](const auto& a, const auto& b) { return a.parts > b.parts; });
  }
  node.reject_unknown_keys();
  return r;
}

// Every set_on and before_release names systems of the mapping.
void check_recipe_systems(const ConfigNode& recipes, const PresetMapping& m) {
  auto check = [&](const ConfigNode& on) {
    for (const auto& system : on.keys())
      if (!m.systems.count(system))
        on.fail(system, fmt::format("system '{}' is not listed under systems:", system));
  };
  for (const auto& name : recipes.keys()) {
    ConfigNode recipe = recipes.child(name);
    if (auto on = recipe.optional_child("set_on")) check(*on);
    if (auto older = recipe.optional_child("before_release"))
      for (const auto& release : older->keys()) check(older->child(release));
  }
}

}  // namespace

std::string settable_key_problem(const std::string& key) {
  if (std::find(kRowKeys.begin(), kRowKeys.end(), key) != kRowKeys.end())
    return "may not set this key: each row sets it from its own columns";
  if (key.rfind("parallel.", 0) && key.rfind("training.", 0) && key.rfind("model.", 0) &&
      key.rfind("moe.", 0))
    return "sets workload keys only: parallel.*, training.*, model.* or moe.*";
  return "";
}

std::optional<std::vector<int>> release_parts(const std::string& release) {
  std::vector<int> parts;
  size_t at = 0;
  while (at <= release.size()) {
    size_t dot = release.find('.', at);
    std::string part = release.substr(at, dot == std::string::npos ? std::string::npos : dot - at);
    if (part.empty() || part.size() > 6 || part.find_first_not_of("0123456789") != std::string::npos)
      return std::nullopt;
    parts.push_back(std::stoi(part));
    if (dot == std::string::npos) break;
    at = dot + 1;
  }
  return parts;
}

PresetMapping load_preset_mapping(const std::string& file) {
  ConfigNode root = ConfigNode::load_file(file);
  PresetMapping m;
  m.file = file;
  root.string_or("description", "");
  root.list("sources");
  ConfigNode recipes = root.child("recipes");
  for (const auto& name : recipes.keys()) m.recipes[name] = read_recipe(recipes.child(name), m.recipes);
  read_systems(root, m);
  check_recipe_systems(recipes, m);
  read_models(root, m);
  root.reject_unknown_keys();
  return m;
}

void require_preset_file(const PresetEntry& entry) {
  if (entry.file.empty() || std::filesystem::is_regular_file(entry.file)) return;
  throw InputError(
      fmt::format("{}: preset {} does not exist (the mapping must name an existing topology or "
                  "workload file, relative to the mapping file, or null with a reason)",
                  entry.where, entry.file));
}

}  // namespace podsim::driver
