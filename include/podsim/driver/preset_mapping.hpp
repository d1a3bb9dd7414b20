// The one file that says how the rows of a published table in NVIDIA's schema (system, model, ...) become
// podsim inputs: which topology preset each system is, which workload preset each model is, and the
// settings the table does not state (recomputation, overlap, ...) as the framework's recipes set them —
// written once per recipe family, never per row. validation/nvidia-presets.yaml is the project's copy.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace podsim::driver {

// A system or model the mapping knows. `file` is resolved against the mapping file's directory; it is
// empty when the mapping says the name cannot be expressed yet, and `reason` says why.
struct PresetEntry {
  std::string file;
  std::string reason;
  std::string recipe;  // models only: the recipe family whose settings apply
  std::string where;   // "mapping.yaml:12:5: models.Llama3-8B", for errors
  // systems only, before_release: what the containers of releases older than `parts` ran on this system
  // whatever the recipe (their libraries, e.g. training.attention_library); newest first.
  struct OlderSoftware {
    std::vector<int> parts;
    std::vector<std::string> sets;
  };
  std::vector<OlderSoftware> before_release;
};

struct Recipe {
  std::vector<std::string> sets;  // "workload.training.recompute=none", in file order
  // set_on: settings the recipe gives one system only (the framework's per-GPU configuration, e.g.
  // userbuffers' tp_overlap_gemms), applied after `sets` to that system's rows.
  std::map<std::string, std::vector<std::string>> system_sets;
  // before_release: what rows of releases older than `release` ran instead (an older configuration file),
  // per system, applied after `sets` and `system_sets`; newest first, so an older release's settings win.
  struct OlderRelease {
    std::vector<int> parts;  // the release as numbers: "25.11" -> 25, 11
    std::map<std::string, std::vector<std::string>> system_sets;
  };
  std::vector<OlderRelease> before_release;
  std::string source;  // the recipe file the settings were read from
};

// Why `key` (a workload key as a recipe writes it, "moe.dispatcher") may not be set by a recipe or a row's
// settings column: a key each row sets from its own columns, or one outside the workload; "" when it may.
std::string settable_key_problem(const std::string& key);

// A release as the table prints it ("25.09", "26.02.01") as its numbers; nullopt for other text.
std::optional<std::vector<int>> release_parts(const std::string& release);

struct PresetMapping {
  std::string file;
  std::map<std::string, PresetEntry> systems;  // system as printed -> topology preset
  std::map<std::string, PresetEntry> models;   // model as printed -> workload preset
  std::map<std::string, Recipe> recipes;
};

// Throws InputError (file:line) for a malformed mapping: unknown keys, a model naming a recipe that is
// not defined, a recipe setting a key each row sets from the table (tp, pp, batch, ...).
PresetMapping load_preset_mapping(const std::string& file);

// Throws InputError naming the mapping's file:line when the preset an entry names does not exist.
void require_preset_file(const PresetEntry& entry);

}  // namespace podsim::driver
