// Strict, located access to YAML configuration.
//
// Every value podsim reads from a topology, workload, profile or study file goes through ConfigNode, so
// that every error names the file, line and column (or the --set flag that supplied the value), the
// dotted field path, what was wrong and what would be valid. Unknown keys are errors, not silently
// ignored: a misspelt key that changes nothing is the worst kind of wrong result.
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace podsim {

// Command-line replacements of configuration values: (dotted path, value) pairs, applied in order. Topology
// and workload loaders take the same type (they re-export it as topology::Overrides, workload::Overrides).
using Overrides = std::vector<std::pair<std::string, std::string>>;

// Where values came from: the file they were parsed from and, for values replaced on the command line,
// the --set flag that replaced them (keyed by dotted path relative to the document root).
struct ConfigSource {
  std::string file;
  std::map<std::string, std::string> overrides;  // dotted path -> "--set workload.parallel.pp=16"
};

class ConfigNode {
 public:
  ConfigNode(YAML::Node node, std::shared_ptr<const ConfigSource> source, std::string path = "");

  // Loads a file (throws InputError with line/column on YAML syntax errors and on a key given twice in
  // one mapping, and naming the path when it cannot be read or is a directory).
  static ConfigNode load_file(const std::string& file);
  static ConfigNode load_string(const std::string& text, const std::string& name);

  // Replaces or creates the value at a dotted path ("parallel.pp") with a YAML scalar parsed from
  // `value`. `flag` is how the user wrote it, for error messages.
  void apply_override(const std::string& dotted_path, const std::string& value, const std::string& flag);

  bool has(std::string_view key) const;
  ConfigNode child(std::string_view key) const;  // required mapping
  ConfigNode at(std::string_view key) const;     // required value of any type
  std::optional<ConfigNode> optional_child(std::string_view key) const;
  std::vector<ConfigNode> elements() const;                  // this node as a sequence
  std::vector<ConfigNode> list(std::string_view key) const;  // required sequence child
  bool is_list(std::string_view key) const;
  std::vector<std::string> keys() const;  // this node as a mapping

  // Typed readers. `what` describes valid values for the error message. Numbers and booleans must be
  // plain YAML scalars (a quoted "96" is text and is rejected), finite and at most 1e15 in magnitude.
  double number(std::string_view key) const;
  double number_or(std::string_view key, double fallback) const;
  double positive(std::string_view key) const;
  double positive_or(std::string_view key, double fallback) const;
  double non_negative_or(std::string_view key, double fallback) const;
  double fraction_or(std::string_view key, double fallback) const;  // in (0, 1]
  long long integer(std::string_view key) const;
  long long integer_or(std::string_view key, long long fallback) const;
  long long integer_in(std::string_view key, long long lo, long long hi) const;  // lo <= value <= hi
  long long integer_in_or(std::string_view key, long long lo, long long hi, long long fallback) const;
  long long positive_integer(std::string_view key) const;
  long long positive_integer_or(std::string_view key, long long fallback) const;
  bool boolean_or(std::string_view key, bool fallback) const;
  std::string string(std::string_view key) const;
  std::string string_or(std::string_view key, std::string fallback) const;
  std::string choice(std::string_view key, const std::vector<std::string>& valid) const;
  std::string choice_or(std::string_view key, const std::vector<std::string>& valid,
                        std::string fallback) const;
  // A positive integer or the word `auto` (returns 0 for auto).
  long long positive_integer_or_auto(std::string_view key, long long fallback) const;

  // The value of this node itself (for sequence elements).
  double as_number() const;
  std::string as_string() const;

  // After reading a mapping, rejects keys that were never read. Call once per mapping node.
  void reject_unknown_keys() const;

  // "file:line:col: path.key" (or the --set flag that supplied the value).
  std::string where(std::string_view key = {}) const;
  [[noreturn]] void fail(std::string_view key, const std::string& message) const;

  const std::string& path() const { return path_; }
  const std::string& file() const { return source_->file; }
  const YAML::Node& yaml() const { return node_; }

 private:
  YAML::Node raw(std::string_view key) const;         // marks the key as read
  std::string key_text(const YAML::Node& key) const;  // a mapping key as text; InputError when not a scalar
  std::string key_path(std::string_view key) const;
  // Fails when `value` is a quoted (text) scalar where `expected` (a number, true or false) is read.
  void reject_text(std::string_view key, const YAML::Node& value, std::string_view expected) const;

  YAML::Node node_;
  std::shared_ptr<const ConfigSource> source_;
  std::string path_;
  std::shared_ptr<std::set<std::string>> read_keys_;
};

// The keys every topology and workload file opens with: returns `name`; `description` and `sources` are
// documentation for people, checked (a string, a list) and not used.
std::string read_document_name(const ConfigNode& root);

// Parses "a.b.c=value" into path and value; throws InputError naming the flag when malformed.
std::pair<std::string, std::string> split_assignment(const std::string& assignment);

}  // namespace podsim
