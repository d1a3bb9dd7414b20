#include "podsim/study/study.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
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

std::vector<std::string> values_of(const ConfigNode& node, const std::string& key) {
  std::vector<std::string> out;
  for (const auto& v : node.list(key)) out.push_back(scalar_text(v));
  if (out.empty()) node.fail(key, "an axis needs at least one value");
  return out;
}

std::vector<Choice> grid(const ConfigNode& node) {
  std::vector<Choice> choices{{}};
  for (const auto& key : node.keys()) {
    check_key(node, key);
    std::vector<Choice> next;
    for (const auto& c : choices)
      for (const auto& v : values_of(node, key)) {
        Choice x = c;
        x.push_back({key, v});
        next.push_back(std::move(x));
      }
    choices = std::move(next);
  }
  return choices;
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
    for (size_t i = 0; i < length; ++i) choices[i].push_back({key, values[i]});
  }
  if (choices.empty()) node.fail({}, "zip needs at least one key with a list of values");
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
  if (has_times) {
    double times = node.number("times");
    if (!(times > 1) || !(from > 0)) node.fail("times", "a geometric range needs from > 0 and times > 1");
    for (double v = from; v <= to * (1 + 1e-12); v *= times) choices.push_back({{key, format_number(v)}});
  } else {
    double step = node.number("step");
    if (!(step > 0)) node.fail("step", "step must be more than 0");
    for (double v = from; v <= to + step * 1e-9; v += step) {
      choices.push_back({{key, format_number(v)}});
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
  for (const auto& c : axis.list("cases")) {
    Choice choice;
    std::string name = c.string("name");
    if (!names.insert(name).second) c.fail("name", fmt::format("two cases are named '{}'", name));
    choice.push_back({"case", name});
    if (auto set = c.optional_child("set"))
      for (const auto& key : set->keys()) {
        check_key(*set, key);
        choice.push_back({key, scalar_text(set->at(key))});  // 'topology'/'workload' switch files
      }
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

Study load_study_text(const std::string& text, const std::string& path, const std::string& base,
                      bool from_file) {
  ConfigNode root = from_file ? ConfigNode::load_file(path) : ConfigNode::load_string(text, path);
  Study study;
  study.file = path;
  study.name = root.string("name");
  study.description = root.string_or("description", "");
  // Files as written (relative to the study file) identify points; resolved paths find the files.
  std::string topology_as_written = root.has("topology") ? root.string("topology") : "";
  std::string workload_as_written = root.has("workload") ? root.string("workload") : "";

  std::vector<Assignment> fixed;
  if (auto set = root.optional_child("set")) {
    for (const auto& key : set->keys()) {
      check_key(*set, key);
      if (is_file_key(key)) set->fail(key, "set 'topology' and 'workload' at the top of the study file");
      fixed.push_back({key, scalar_text(set->at(key))});
    }
  }

  std::vector<std::vector<Choice>> entries;
  if (root.has("axes")) {
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
        if (std::find(study.axis_keys.begin(), study.axis_keys.end(), key) == study.axis_keys.end())
          study.axis_keys.push_back(key);
        else
          axis.fail(kind, fmt::format("'{}' appears in two axis entries", key));
    }
  }

  std::vector<Expression> filters;
  if (root.has("filters")) {
    for (const auto& f : root.list("filters")) {
      try {
        filters.push_back(Expression::parse(scalar_text(f)));
      } catch (const std::invalid_argument& e) {
        f.fail({}, fmt::format("filter does not parse: {}", e.what()));
      }
    }
  }
  root.reject_unknown_keys();

  // Cartesian product of the entries, first entry slowest.
  size_t total = 1;
  for (const auto& e : entries) {
    total *= e.size();
    if (total > kMaxPoints)
      root.fail("axes", fmt::format("the study expands to more than {} points", kMaxPoints));
  }
  std::vector<size_t> idx(entries.size(), 0);
  for (size_t n = 0; n < total; ++n) {
    Point p;
    p.index = static_cast<int>(n);
    std::string topology = topology_as_written, workload = workload_as_written;
    p.sets = fixed;
    for (const auto& a : fixed) p.values[a.key] = a.value;
    for (size_t e = 0; e < entries.size(); ++e)
      for (const auto& a : entries[e][idx[e]]) {
        if (a.key == "topology")
          topology = a.value;
        else if (a.key == "workload")
          workload = a.value;
        else if (a.key != "case")
          p.sets.push_back(a);
        p.values[column_name(a.key)] = a.value;
      }
    if (topology.empty())
      root.fail("topology", "the study names no topology (top-level 'topology:' or an axis)");
    if (workload.empty())
      root.fail("workload", "the study names no workload (top-level 'workload:' or an axis)");
    p.topology_file = resolve(base, topology);
    p.workload_file = resolve(base, workload);
    // The id must not depend on where the study is run from or how its path was given.
    std::string canonical = topology + "|" + workload;
    for (const auto& a : p.sets) canonical += "|" + a.key + "=" + a.value;
    p.id = fnv1a(canonical);
    for (const auto& f : filters) {
      bool keep;
      try {
        keep = f.evaluate(p.values);
      } catch (const std::invalid_argument& e) {
        throw InputError(fmt::format("{}: filters: '{}': {}", path, f.text(), e.what()));
      }
      if (!keep) {
        p.skipped = "filter: " + f.text();
        break;
      }
    }
    study.points.push_back(std::move(p));
    for (size_t e = entries.size(); e-- > 0;) {
      if (++idx[e] < entries[e].size()) break;
      idx[e] = 0;
    }
  }
  return study;
}

}  // namespace podsim::study
