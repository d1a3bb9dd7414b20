#include "podsim/study/study.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "podsim/core/config_node.hpp"
#include "podsim/core/error.hpp"

namespace podsim::study {
namespace {

constexpr size_t kMaxPoints = 100000;

using Choice = std::vector<Assignment>;  // one combination of one axis entry

std::string scalar_text(const ConfigNode& node) {
  if (!node.yaml().IsScalar()) node.fail({}, "expected a single value (number or text)");
  return node.yaml().Scalar();
}

std::string format_number(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<long long>(v));
  return fmt::format("{}", v);
}

bool is_file_key(const std::string& key) {
  return key == "topology" || key == "workload";
}

// Results columns "topology" and "workload" hold names; file axes get their own columns.
std::string column_name(const std::string& key) {
  return is_file_key(key) ? key + "_file" : key;
}

std::string resolve(const std::string& base_dir, const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_absolute()) return p.string();
  return (std::filesystem::path(base_dir) / p).lexically_normal().string();
}

void check_key(const ConfigNode& where, const std::string& key) {
  if (key == "case") where.fail(key, "'case' is the column of a cases axis; it cannot be set");
  if (is_file_key(key) || key.rfind("topology.", 0) == 0 || key.rfind("workload.", 0) == 0) return;
  where.fail(key,
             "axis keys are 'topology', 'workload' or a --set key starting with 'topology.' or 'workload.'");
}

// The values of one axis key, each with where it was written.
std::vector<Assignment> values_of(const ConfigNode& node, const std::string& key) {
  std::vector<Assignment> out;
  for (const auto& v : node.list(key)) out.push_back({key, scalar_text(v), v.where()});
  if (out.empty()) node.fail(key, "an axis needs at least one value");
  return out;
}

// A repeated value would make two points that are the same point: they would run twice, and shards
// holding both could not be merged.
[[noreturn]] void fail_repeated(const std::string& origin, const std::string& what) {
  throw InputError(fmt::format("{}: {} appears twice; remove the repeated one", origin, what));
}

std::vector<Choice> grid(const ConfigNode& node) {
  std::vector<Choice> choices{{}};
  for (const auto& key : node.keys()) {
    check_key(node, key);
    auto values = values_of(node, key);
    std::set<std::string> seen;
    for (const auto& v : values)
      if (!seen.insert(v.value).second) fail_repeated(v.origin, fmt::format("value '{}'", v.value));
    std::vector<Choice> next;
    for (const auto& c : choices)
      for (const auto& v : values) {
        Choice x = c;
        x.push_back(v);
        next.push_back(std::move(x));
      }
    choices = std::move(next);
  }
  return choices;
}

std::string choice_text(const Choice& c) {
  std::string out;
  for (const auto& a : c)
    if (a.key != "case") out += (out.empty() ? "" : ", ") + a.key + "=" + a.value;
  return out.empty() ? "(no settings)" : out;
}

std::vector<Choice> zip(const ConfigNode& node) {
  std::vector<Choice> choices;
  size_t length = 0;
  std::string first;
  for (const auto& key : node.keys()) {
    check_key(node, key);
    auto values = values_of(node, key);
    if (first.empty()) {
      first = key;
      length = values.size();
      choices.resize(length);
    } else if (values.size() != length) {
      node.fail(key, fmt::format("zip lists must have the same length: {} has {} values, {} has {}", first,
                                 length, key, values.size()));
    }
    for (size_t i = 0; i < length; ++i) choices[i].push_back(values[i]);
  }
  if (choices.empty()) node.fail({}, "zip needs at least one key with a list of values");
  std::set<std::string> seen;
  for (const auto& c : choices)
    if (!seen.insert(choice_text(c)).second)
      fail_repeated(c.front().origin, fmt::format("the combination {}", choice_text(c)));
  return choices;
}

std::vector<Choice> range(const ConfigNode& node) {
  std::string key = node.string("key");
  check_key(node, key);
  double from = node.number("from"), to = node.number("to");
  bool has_times = node.has("times"), has_step = node.has("step");
  if (has_times == has_step)
    node.fail("times", "a range needs exactly one of 'times' (geometric) or 'step' (arithmetic)");
  std::vector<Choice> choices;
  const std::string origin = node.where("key");
  if (has_times) {
    double times = node.number("times");
    if (!(times > 1) || !(from > 0)) node.fail("times", "a geometric range needs from > 0 and times > 1");
    for (double v = from; v <= to * (1 + 1e-12); v *= times)
      choices.push_back({{key, format_number(v), origin}});
  } else {
    double step = node.number("step");
    if (!(step > 0)) node.fail("step", "step must be more than 0");
    for (double v = from; v <= to + step * 1e-9; v += step) {
      choices.push_back({{key, format_number(v), origin}});
      if (choices.size() > kMaxPoints) break;
    }
  }
  if (choices.empty()) node.fail("to", fmt::format("the range from {} to {} is empty", from, to));
  if (choices.size() > kMaxPoints)
    node.fail("to", fmt::format("the range has more than {} values", kMaxPoints));
  node.reject_unknown_keys();
  return choices;
}

// Named what-if cases: each is one point of the axis with its own --set values; the column is `case`.
std::vector<Choice> cases(const ConfigNode& axis) {
  std::vector<Choice> choices;
  std::set<std::string> names;
  std::map<std::string, std::string> settings;  // what a case sets -> its name
  for (const auto& c : axis.list("cases")) {
    Choice choice;
    std::string name = c.string("name");
    if (!names.insert(name).second) c.fail("name", fmt::format("two cases are named '{}'", name));
    choice.push_back({"case", name, c.where("name")});
    if (auto set = c.optional_child("set"))
      for (const auto& key : set->keys()) {
        check_key(*set, key);
        choice.push_back({key, scalar_text(set->at(key)), set->where(key)});  // 'topology'/'workload': files
      }
    if (auto [it, fresh] = settings.emplace(choice_text(choice), name); !fresh)
      c.fail("set", fmt::format("case '{}' sets the same values as case '{}' ({}): they are the same point",
                                name, it->second, it->first));
    c.string_or("description", "");
    c.reject_unknown_keys();
    choices.push_back(std::move(choice));
  }
  if (choices.empty()) axis.fail("cases", "cases needs at least one case");
  return choices;
}

std::string fnv1a(const std::string& s) {
  unsigned long long h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return fmt::format("{:016x}", h);
}

// The axis entries of a study and the columns they add, in order of appearance.
std::vector<std::vector<Choice>> read_axes(const ConfigNode& root, std::vector<std::string>& axis_keys) {
  std::vector<std::vector<Choice>> entries;
  if (!root.has("axes")) return entries;
  for (const auto& axis : root.list("axes")) {
    auto kinds = axis.keys();
    if (kinds.size() != 1) axis.fail({}, "each axis entry is one of: grid, zip, range");
    const std::string& kind = kinds[0];
    if (kind == "grid")
      entries.push_back(grid(axis.child("grid")));
    else if (kind == "zip")
      entries.push_back(zip(axis.child("zip")));
    else if (kind == "range")
      entries.push_back(range(axis.child("range")));
    else if (kind == "cases")
      entries.push_back(cases(axis));
    else
      axis.fail(kind, "unknown axis kind; use grid (crossed lists), zip (paired lists), range or cases");
    // A cases axis contributes one column (`case`); the others one column per key.
    std::vector<std::string> keys;
    if (kind == "cases")
      keys.push_back("case");
    else
      for (const auto& a : entries.back().front()) keys.push_back(column_name(a.key));
    for (const auto& key : keys)
      if (std::find(axis_keys.begin(), axis_keys.end(), key) == axis_keys.end())
        axis_keys.push_back(key);
      else
        axis.fail(kind, fmt::format("'{}' appears in two axis entries", key));
  }
  return entries;
}

std::vector<Expression> read_filters(const ConfigNode& root) {
  std::vector<Expression> filters;
  if (!root.has("filters")) return filters;
  for (const auto& f : root.list("filters")) {
    try {
      filters.push_back(Expression::parse(scalar_text(f)));
    } catch (const std::invalid_argument& e) {
      f.fail({}, fmt::format("filter does not parse: {}", e.what()));
    }
  }
  return filters;
}

// Remembers each topology and workload file a point uses, with where the study names it.
void note_file(Study& study, std::set<std::string>& seen, const Assignment& file, const std::string& path) {
  if (seen.insert(path).second) study.files.push_back({file.origin, file.value, path});
}

// What every point starts from: the top-level files and `set`, and the directory files are relative to.
struct Defaults {
  Assignment topology, workload;
  std::vector<Assignment> fixed;
  std::string base;
};

// Fills the files, sets and id of point `p` from the axis choices it combines; returns the topology and
// workload it uses (with where the study names them).
std::pair<Assignment, Assignment> assemble(const ConfigNode& root, const Defaults& d,
                                           const std::vector<const Choice*>& choices, Point& p) {
  Assignment topology = d.topology, workload = d.workload;
  for (const auto& a : d.fixed) p.values[a.key] = a.value;
  p.sets = d.fixed;
  for (const Choice* choice : choices)
    for (const auto& a : *choice) {
      if (a.key == "topology")
        topology = a;
      else if (a.key == "workload")
        workload = a;
      else if (a.key != "case")
        p.sets.push_back(a);
      p.values[column_name(a.key)] = a.value;
    }
  if (topology.value.empty())
    root.fail("topology", "the study names no topology (top-level 'topology:' or an axis)");
  if (workload.value.empty())
    root.fail("workload", "the study names no workload (top-level 'workload:' or an axis)");
  p.topology_file = resolve(d.base, topology.value);
  p.workload_file = resolve(d.base, workload.value);
  // The id must not depend on where the study is run from or how its path was given.
  std::string canonical = topology.value + "|" + workload.value;
  for (const auto& a : p.sets) canonical += "|" + a.key + "=" + a.value;
  p.id = fnv1a(canonical);
  return {topology, workload};
}

void apply_filters(const Study& study, const std::vector<Expression>& filters, Point& p) {
  for (const auto& f : filters) {
    bool keep;
    try {
      keep = f.evaluate(p.values);
    } catch (const std::invalid_argument& e) {
      throw InputError(fmt::format("{}: filters: '{}': {}", study.file, f.text(), e.what()));
    }
    if (!keep) {
      p.skipped = "filter: " + f.text();
      return;
    }
  }
}

}  // namespace

std::string Point::label() const {
  std::string out;
  for (const auto& [k, v] : values) {
    if (!out.empty()) out += " ";
    out += k + "=" + v;
  }
  return out.empty() ? "(single point)" : out;
}

Study load_study(const std::string& path) {
  std::string base = std::filesystem::path(path).parent_path().string();
  return load_study_text("", path, base.empty() ? "." : base, true);
}

// `baseline:` names a case of the study's cases axis.
static void check_baseline(const ConfigNode& root, const Study& study) {
  if (study.baseline.empty()) return;
  std::vector<std::string> cases;
  for (const auto& p : study.points) {
    auto it = p.values.find("case");
    if (it == p.values.end()) continue;
    if (it->second == study.baseline) return;
    if (std::find(cases.begin(), cases.end(), it->second) == cases.end()) cases.push_back(it->second);
  }
  root.fail("baseline", cases.empty() ? std::string("names a case, and the study has no cases axis")
                                      : fmt::format("no case named '{}'; the cases are {}", study.baseline,
                                                    fmt::join(cases, ", ")));
}

Study load_study_text(const std::string& text, const std::string& path, const std::string& base,
                      bool from_file) {
  ConfigNode root = from_file ? ConfigNode::load_file(path) : ConfigNode::load_string(text, path);
  Study study;
  study.file = path;
  study.name = root.string("name");
  study.description = root.string_or("description", "");
  // Files as written (relative to the study file) identify points; resolved paths find the files.
  Defaults d;
  d.base = base;
  d.topology = {"topology", root.has("topology") ? root.string("topology") : "", root.where("topology")};
  d.workload = {"workload", root.has("workload") ? root.string("workload") : "", root.where("workload")};
  if (auto set = root.optional_child("set")) {
    for (const auto& key : set->keys()) {
      check_key(*set, key);
      if (is_file_key(key)) set->fail(key, "set 'topology' and 'workload' at the top of the study file");
      d.fixed.push_back({key, scalar_text(set->at(key)), set->where(key)});
    }
  }
  if (root.has("goodput")) study.goodput_file = resolve(base, root.string("goodput"));
  study.baseline = root.string_or("baseline", "");
  auto entries = read_axes(root, study.axis_keys);
  auto filters = read_filters(root);
  root.reject_unknown_keys();

  // Cartesian product of the entries, first entry slowest.
  size_t total = 1;
  for (const auto& e : entries) {
    total *= e.size();
    if (total > kMaxPoints)
      root.fail("axes", fmt::format("the study expands to more than {} points", kMaxPoints));
  }
  std::vector<size_t> idx(entries.size(), 0);
  std::set<std::string> files_seen;
  std::map<std::string, int> ids;
  for (size_t n = 0; n < total; ++n) {
    Point p;
    p.index = static_cast<int>(n);
    std::vector<const Choice*> choices;
    for (size_t e = 0; e < entries.size(); ++e) choices.push_back(&entries[e][idx[e]]);
    auto [topology, workload] = assemble(root, d, choices, p);
    note_file(study, files_seen, topology, p.topology_file);
    note_file(study, files_seen, workload, p.workload_file);
    if (auto [it, fresh] = ids.emplace(p.id, p.index); !fresh)  // e.g. a value repeated across entries
      root.fail("axes", fmt::format("points {} and {} are the same point ({}); remove the repetition",
                                    it->second, p.index, p.label()));
    apply_filters(study, filters, p);
    study.points.push_back(std::move(p));
    for (size_t e = entries.size(); e-- > 0;) {
      if (++idx[e] < entries[e].size()) break;
      idx[e] = 0;
    }
  }
  check_baseline(root, study);
  return study;
}

void check_files_exist(const Study& study) {
  for (const auto& f : study.files) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(f.path, ec)) continue;
    bool exists = std::filesystem::exists(f.path, ec);
    throw InputError(fmt::format("{}: {}: {} (looked for {})", f.origin, f.as_written,
                                 exists ? "not a regular file" : "no such file", f.path));
  }
}

}  // namespace podsim::study
