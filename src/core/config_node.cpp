// Over the 400-line guide on purpose: this is the one class every input file goes through, and its typed
// readers (number, integer_in, choice, ...) share the private helpers above them; split, each reader would
// be a jump away from the checks (finite, unquoted, in range, no duplicate key) that make it strict.
#include "podsim/core/config_node.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>

#include "podsim/core/error.hpp"
#include "podsim/core/text_input.hpp"

namespace podsim {
namespace {

std::string describe_value(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsScalar()) return fmt::format("'{}'", node.Scalar());
  if (node.IsSequence()) return "a list";
  return "a mapping";
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

// Edit distance, for "did you mean" hints on unknown keys.
size_t distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// podsim's inputs are in human units (GiB, GB/s, TB, TFLOP/s, rows), where nothing comes near this; a
// larger value is a typo, and one near the double range would overflow to infinity once multiplied.
constexpr double kLargestNumber = 1e15;

// More values than any podsim file has by orders of magnitude (see reject_duplicate_keys).
constexpr size_t kMaxNodes = 1000000;

// A scalar the author quoted ("96", '1', a block scalar) or tagged !!str is text in YAML, even when it looks
// like a number: reading it as one would hide a file that says something other than it seems.
bool is_text_scalar(const YAML::Node& node) {
  return node.IsScalar() && (node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str");
}

// yaml-cpp keeps both entries of a repeated key and lookups see only one of them, so a file that sets a
// value twice silently loses one: reject it, naming both places. `locate` formats "file:line:col" for a
// mark. Visits at most `budget` nodes, so that aliases repeated into a huge tree cannot stall it.
void reject_duplicate_keys(const YAML::Node& node, const std::string& path,
                           const std::function<std::string(const YAML::Mark&)>& locate, size_t& budget) {
  if (budget == 0)
    throw InputError(
        fmt::format("{}: more than a million values (anchors and aliases repeated?)", locate(node.Mark())));
  --budget;
  auto label = [](const std::string& p) { return p.empty() ? std::string("(top level)") : p; };
  if (node.IsSequence()) {
    for (size_t i = 0; i < node.size(); ++i)
      reject_duplicate_keys(node[i], fmt::format("{}[{}]", path, i), locate, budget);
    return;
  }
  if (!node.IsMap()) return;
  std::map<std::string, YAML::Mark> seen;
  for (const auto& kv : node) {
    std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
    std::string child = path.empty() ? key : path + "." + key;
    if (kv.first.IsScalar()) {
      auto [first, fresh] = seen.emplace(key, kv.first.Mark());
      if (!fresh)
        throw InputError(fmt::format(
            "{}: {}: duplicate key '{}' (first given at line {}); YAML keeps only one of the two, so "
            "remove one",
            locate(kv.first.Mark()), label(child), key, first->second.line + 1));
    }
    reject_duplicate_keys(kv.second, child, locate, budget);
  }
}

}  // namespace

ConfigNode::ConfigNode(YAML::Node node, std::shared_ptr<const ConfigSource> source, std::string path)
    : node_(std::move(node)),
      source_(std::move(source)),
      path_(std::move(path)),
      read_keys_(std::make_shared<std::set<std::string>>()) {}

ConfigNode ConfigNode::load_file(const std::string& file) {
  // Input names go into result.json and the reports, which are UTF-8 (JSON cannot hold other bytes).
  if (!is_valid_utf8(file))
    throw InputError(
        fmt::format("{}: the file name is not valid UTF-8; podsim records the names of its "
                    "inputs in result.json and the reports, so rename the file",
                    printable(file)));
  return load_string(read_text_file(file), file);
}

ConfigNode ConfigNode::load_string(const std::string& text, const std::string& name) {
  if (auto bad = invalid_utf8_at(text)) {
    size_t line_start = text.rfind('\n', *bad);
    line_start = line_start == std::string::npos ? 0 : line_start + 1;
    throw InputError(
        fmt::format("{}:{}:{}: the file is not valid UTF-8 (byte 0x{:02X}); YAML files are UTF-8", name,
                    1 + std::count(text.begin(), text.begin() + *bad, '\n'), *bad - line_start + 1,
                    static_cast<unsigned char>(text[*bad])));
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw InputError(
        fmt::format("{}:{}:{}: YAML syntax error: {}", name, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  if (root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap())
    throw InputError(fmt::format("{}:1:1: expected a mapping of keys at the top level", name));
  size_t budget = kMaxNodes;
  reject_duplicate_keys(
      root, "",
      [&](const YAML::Mark& m) {
        return m.is_null() ? name : fmt::format("{}:{}:{}", name, m.line + 1, m.column + 1);
      },
      budget);
  auto source = std::make_shared<ConfigSource>();
  source->file = name;
  return ConfigNode(root, source, "");
}

void ConfigNode::apply_override(const std::string& dotted_path, const std::string& value,
                                const std::string& flag) {
  std::vector<std::string> parts;
  std::stringstream ss(dotted_path);
  for (std::string part; std::getline(ss, part, '.');) {
    if (part.empty()) throw InputError(fmt::format("{}: empty key in path '{}'", flag, dotted_path));
    parts.push_back(part);
  }
  if (parts.empty()) throw InputError(fmt::format("{}: missing key path", flag));
  if (!is_valid_utf8(dotted_path) || !is_valid_utf8(value))
    throw InputError(fmt::format("{}: not valid UTF-8; podsim's inputs are UTF-8 text", printable(flag)));
  YAML::Node parsed;
  try {
    parsed = YAML::Load(value);
  } catch (const YAML::ParserException& e) {
    throw InputError(fmt::format("{}: value is not valid YAML: {}", flag, e.msg));
  }
  size_t budget = kMaxNodes;
  reject_duplicate_keys(
      parsed, dotted_path, [&](const YAML::Mark&) { return flag; }, budget);
  // yaml-cpp nodes are handles: walk down by reassigning a handle, creating mappings as needed.
  YAML::Node cursor = node_;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node next = cursor[parts[i]];
    if (next.IsDefined() && !next.IsNull() && !next.IsMap())
      throw InputError(fmt::format("{}: '{}' is {} in {}, not a mapping that could hold '{}'", flag,
                                   join({parts.begin(), parts.begin() + i + 1}, "."), describe_value(next),
                                   source_->file, parts[i + 1]));
    if (!next.IsDefined() || next.IsNull()) cursor[parts[i]] = YAML::Node(YAML::NodeType::Map);
    cursor.reset(cursor[parts[i]]);
  }
  cursor[parts.back()] = parsed;
  auto mutable_source = std::const_pointer_cast<ConfigSource>(source_);
  std::string full = path_.empty() ? dotted_path : path_ + "." + dotted_path;
  mutable_source->overrides[full] = flag;
}

std::string ConfigNode::key_path(std::string_view key) const {
  if (key.empty()) return path_;
  if (path_.empty()) return std::string(key);
  return path_ + "." + std::string(key);
}

std::string ConfigNode::where(std::string_view key) const {
  std::string full = key_path(key);
  // A value replaced on the command line is reported against the flag, including values below it.
  for (const auto& [path, flag] : source_->overrides) {
    if (full == path || full.rfind(path + ".", 0) == 0) return fmt::format("{} (field {})", flag, full);
  }
  YAML::Mark mark = node_.Mark();
  if (!key.empty() && node_.IsMap()) {
    const YAML::Node& self = node_;
    YAML::Node value = self[std::string(key)];
    if (value.IsDefined() && !value.Mark().is_null()) mark = value.Mark();
  }
  if (mark.is_null()) return fmt::format("{}: {}", source_->file, full.empty() ? "(top level)" : full);
  return fmt::format("{}:{}:{}: {}", source_->file, mark.line + 1, mark.column + 1,
                     full.empty() ? "(top level)" : full);
}

void ConfigNode::fail(std::string_view key, const std::string& message) const {
  throw InputError(fmt::format("{}: {}", where(key), message));
}

YAML::Node ConfigNode::raw(std::string_view key) const {
  if (!node_.IsMap()) fail({}, fmt::format("expected a mapping, got {}", describe_value(node_)));
  read_keys_->insert(std::string(key));
  const YAML::Node& self = node_;
  return self[std::string(key)];
}

bool ConfigNode::has(std::string_view key) const {
  if (!node_.IsMap()) return false;
  const YAML::Node& self = node_;
  YAML::Node value = self[std::string(key)];
  return value.IsDefined() && !value.IsNull();
}

ConfigNode ConfigNode::child(std::string_view key) const {
  YAML::Node value = raw(key);
  if (!value.IsDefined() || value.IsNull()) fail(key, "required section is missing");
  if (!value.IsMap()) fail(key, fmt::format("expected a mapping of keys, got {}", describe_value(value)));
  return ConfigNode(value, source_, key_path(key));
}

ConfigNode ConfigNode::at(std::string_view key) const {
  YAML::Node value = raw(key);
  if (!value.IsDefined() || value.IsNull()) fail(key, "required value is missing");
  return ConfigNode(value, source_, key_path(key));
}

std::optional<ConfigNode> ConfigNode::optional_child(std::string_view key) const {
  YAML::Node value = raw(key);
  if (!value.IsDefined() || value.IsNull()) return std::nullopt;
  if (!value.IsMap()) fail(key, fmt::format("expected a mapping of keys, got {}", describe_value(value)));
  return ConfigNode(value, source_, key_path(key));
}

std::vector<ConfigNode> ConfigNode::elements() const {
  if (!node_.IsSequence()) fail({}, fmt::format("expected a list, got {}", describe_value(node_)));
  std::vector<ConfigNode> out;
  for (size_t i = 0; i < node_.size(); ++i)
    out.emplace_back(node_[i], source_, fmt::format("{}[{}]", path_, i));
  return out;
}

std::vector<ConfigNode> ConfigNode::list(std::string_view key) const {
  YAML::Node value = raw(key);
  if (!value.IsDefined() || value.IsNull()) fail(key, "required list is missing");
  if (!value.IsSequence()) fail(key, fmt::format("expected a list, got {}", describe_value(value)));
  return ConfigNode(value, source_, key_path(key)).elements();
}

bool ConfigNode::is_list(std::string_view key) const {
  if (!node_.IsMap()) return false;
  const YAML::Node& self = node_;
  return self[std::string(key)].IsSequence();
}

std::string ConfigNode::key_text(const YAML::Node& key) const {
  if (!key.IsScalar()) {
    YAML::Mark m = key.Mark();
    throw InputError(fmt::format("{}:{}:{}: {}: keys must be plain names, not {}", source_->file, m.line + 1,
                                 m.column + 1, path_.empty() ? "(top level)" : path_, describe_value(key)));
  }
  return key.Scalar();
}

std::vector<std::string> ConfigNode::keys() const {
  std::vector<std::string> out;
  if (!node_.IsMap()) return out;
  for (const auto& kv : node_) out.push_back(key_text(kv.first));
  return out;
}

void ConfigNode::reject_text(std::string_view key, const YAML::Node& value, std::string_view expected) const {
  if (!is_text_scalar(value)) return;
  fail(key, fmt::format("expected {}, got the quoted text {}: YAML reads a quoted value as text, so remove "
                        "the quotes",
                        expected, describe_value(value)));
}

double ConfigNode::as_number() const {
  if (!node_.IsScalar()) fail({}, fmt::format("expected a number, got {}", describe_value(node_)));
  reject_text({}, node_, "a number");
  double v;
  try {
    v = node_.as<double>();
  } catch (const YAML::Exception&) {
    fail({}, fmt::format("expected a number, got {}", describe_value(node_)));
  }
  if (!std::isfinite(v)) fail({}, fmt::format("expected a finite number, got {}", describe_value(node_)));
  if (std::fabs(v) > kLargestNumber)
    fail({}, fmt::format("{} is out of range: podsim reads values in units such as GiB, GB/s, TB and "
                         "TFLOP/s, where none is beyond 1e15",
                         describe_value(node_)));
  return v;
}

std::string ConfigNode::as_string() const {
  if (!node_.IsScalar()) fail({}, fmt::format("expected text, got {}", describe_value(node_)));
  return node_.Scalar();
}

double ConfigNode::number(std::string_view key) const {
  YAML::Node value = raw(key);
  if (!value.IsDefined() || value.IsNull()) fail(key, "required value is missing (expected a number)");
  return ConfigNode(value, source_, key_path(key)).as_number();
}

double ConfigNode::number_or(std::string_view key, double fallback) const {
  return has(key) ? number(key) : (raw(key), fallback);
}

double ConfigNode::positive(std::string_view key) const {
  double v = number(key);
  if (!(v > 0)) fail(key, fmt::format("must be greater than 0, got {}", v));
  return v;
}

double ConfigNode::positive_or(std::string_view key, double fallback) const {
  return has(key) ? positive(key) : (raw(key), fallback);
}

double ConfigNode::non_negative_or(std::string_view key, double fallback) const {
  if (!has(key)) return raw(key), fallback;
  double v = number(key);
  if (v < 0) fail(key, fmt::format("must be 0 or more, got {}", v));
  return v;
}

double ConfigNode::fraction_or(std::string_view key, double fallback) const {
  if (!has(key)) return raw(key), fallback;
  double v = number(key);
  if (!(v > 0 && v <= 1)) fail(key, fmt::format("must be a fraction in (0, 1], got {}", v));
  return v;
}

long long ConfigNode::integer(std::string_view key) const {
  YAML::Node value = raw(key);
  if (!value.IsDefined() || value.IsNull()) fail(key, "required value is missing (expected a whole number)");
  reject_text(key, value, "a whole number");
  double v = 0;
  try {
    v = value.as<double>();
  } catch (const YAML::Exception&) {
    fail(key, fmt::format("expected a whole number, got {}", describe_value(value)));
  }
  if (v != std::floor(v) || !std::isfinite(v))
    fail(key, fmt::format("expected a whole number, got {}", describe_value(value)));
  // Beyond this no count podsim reads is meaningful, and int conversions stay safe.
  if (std::fabs(v) > 1e9)
    fail(key, fmt::format("{} is out of range (at most 1000000000)", describe_value(value)));
  return static_cast<long long>(v);
}

long long ConfigNode::integer_in(std::string_view key, long long lo, long long hi) const {
  long long v = integer(key);
  if (v < lo || v > hi) fail(key, fmt::format("must be between {} and {}, got {}", lo, hi, v));
  return v;
}

long long ConfigNode::integer_in_or(std::string_view key, long long lo, long long hi,
                                    long long fallback) const {
  return has(key) ? integer_in(key, lo, hi) : (raw(key), fallback);
}

long long ConfigNode::integer_or(std::string_view key, long long fallback) const {
  return has(key) ? integer(key) : (raw(key), fallback);
}

long long ConfigNode::positive_integer(std::string_view key) const {
  long long v = integer(key);
  if (v <= 0) fail(key, fmt::format("must be a whole number of at least 1, got {}", v));
  return v;
}

long long ConfigNode::positive_integer_or(std::string_view key, long long fallback) const {
  return has(key) ? positive_integer(key) : (raw(key), fallback);
}

long long ConfigNode::positive_integer_or_auto(std::string_view key, long long fallback) const {
  if (!has(key)) return raw(key), fallback;
  YAML::Node value = raw(key);
  if (value.IsScalar() && value.Scalar() == "auto") return 0;
  long long v;
  try {
    v = integer(key);
  } catch (const InputError&) {
    fail(key, fmt::format("expected a whole number of at least 1 or 'auto', got {}", describe_value(value)));
  }
  if (v <= 0) fail(key, fmt::format("expected a whole number of at least 1 or 'auto', got {}", v));
  return v;
}

bool ConfigNode::boolean_or(std::string_view key, bool fallback) const {
  YAML::Node value = raw(key);
  if (!value.IsDefined() || value.IsNull()) return fallback;
  reject_text(key, value, "true or false");
  try {
    if (value.IsScalar()) return value.as<bool>();
  } catch (const YAML::Exception&) {
  }
  fail(key, fmt::format("expected true or false, got {}", describe_value(value)));
}

std::string ConfigNode::string(std::string_view key) const {
  YAML::Node value = raw(key);
  if (!value.IsDefined() || value.IsNull()) fail(key, "required value is missing (expected text)");
  return ConfigNode(value, source_, key_path(key)).as_string();
}

std::string ConfigNode::string_or(std::string_view key, std::string fallback) const {
  return has(key) ? string(key) : (raw(key), fallback);
}

std::string ConfigNode::choice(std::string_view key, const std::vector<std::string>& valid) const {
  std::string v = string(key);
  for (const auto& option : valid)
    if (v == option) return v;
  fail(key, fmt::format("'{}' is not one of: {}", v, join(valid, ", ")));
}

std::string ConfigNode::choice_or(std::string_view key, const std::vector<std::string>& valid,
                                  std::string fallback) const {
  return has(key) ? choice(key, valid) : (raw(key), fallback);
}

void ConfigNode::reject_unknown_keys() const {
  if (!node_.IsMap()) return;
  for (const auto& kv : node_) {
    std::string key = key_text(kv.first);
    if (read_keys_->count(key)) continue;
    std::string hint;
    size_t best = 3;
    for (const auto& known : *read_keys_) {
      size_t d = distance(key, known);
      if (d < best) best = d, hint = fmt::format(" (did you mean '{}'?)", known);
    }
    std::vector<std::string> valid(read_keys_->begin(), read_keys_->end());
    throw InputError(fmt::format("{}: unknown key '{}'{}; valid keys here: {}", where(key), key, hint,
                                 valid.empty() ? "none" : join(valid, ", ")));
  }
}

std::string read_document_name(const ConfigNode& root) {
  std::string name = root.string("name");
  root.string_or("description", "");
  if (root.has("sources")) root.list("sources");
  return name;
}

std::pair<std::string, std::string> split_assignment(const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError(
        fmt::format("--set {}: expected KEY=VALUE, e.g. --set workload.parallel.pp=16", assignment));
  return {assignment.substr(0, eq), assignment.substr(eq + 1)};
}

}  // namespace podsim
