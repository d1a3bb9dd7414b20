// Reading a study's results table for its report (html_study_view.hpp).
#include "html_study_view.hpp"

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <set>

namespace podsim::report::html {

int StudyView::col(const std::string& name) const {
  auto it = std::find(t.columns.begin(), t.columns.end(), name);
  return it == t.columns.end() ? -1 : static_cast<int>(it - t.columns.begin());
}

std::string StudyView::cell(size_t row, const std::string& name) const {
  int c = col(name);
  return c < 0 || static_cast<size_t>(c) >= t.rows[row].size() ? "" : t.rows[row][c];
}

std::optional<double> StudyView::num(size_t row, const std::string& name) const {
  std::string s = cell(row, name);
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str()) return std::nullopt;
  return v;
}

std::string short_value(const std::string& key, const std::string& value) {
  if (key.size() < 5 ||
      (key.compare(key.size() - 5, 5, "_file") != 0 && key != "topology" && key != "workload"))
    return value;
  std::string base =
      value.substr(value.find_last_of('/') == std::string::npos ? 0 : value.find_last_of('/') + 1);
  for (const char* ext : {".yaml", ".yml"})
    if (base.size() > 5 && base.rfind(ext) == base.size() - std::string(ext).size())
      base.resize(base.size() - std::string(ext).size());
  return base;
}

std::string StudyView::label(size_t row) const {
  if (t.axis_keys.empty()) return cell(row, "workload") + " on " + cell(row, "topology");
  if (t.axis_keys.size() == 1) return short_value(t.axis_keys[0], cell(row, t.axis_keys[0]));
  std::string out;
  for (const auto& k : t.axis_keys) {
    std::string name = k.substr(k.rfind('.') == std::string::npos ? 0 : k.rfind('.') + 1);
    out += (out.empty() ? "" : " ") + name + "=" + short_value(k, cell(row, k));
  }
  return out;
}

std::vector<std::string> StudyView::values_of(const std::string& key) const {
  std::vector<std::string> out;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    std::string v = cell(r, key);
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

std::string StudyView::throughput_column() const {
  for (size_t r = 0; r < t.rows.size(); ++r)
    if (num(r, "tokens_per_s")) return "tokens_per_s";
  return "samples_per_s";
}

std::vector<std::pair<std::string, std::vector<size_t>>> StudyView::series() const {
  // Axes that only size the job (nodes, systems, torus dims, batch) move along a series; every other
  // axis (a case, a bandwidth, a parallel setting) starts one of its own.
  static const std::regex sizing("^topology\\.(nodes|systems|dims)$|global_batch$|batch_tokens$");
  std::set<std::string> machines;
  for (size_t r = 0; r < t.rows.size(); ++r) machines.insert(cell(r, "topology") + "|" + cell(r, "workload"));
  std::vector<std::pair<std::string, std::vector<size_t>>> out;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    if (!ok(r)) continue;
    std::string name = machines.size() > 1 ? cell(r, "topology") + " \u00b7 " + cell(r, "workload") : "";
    for (const auto& k : t.axis_keys)
      if (!std::regex_search(k, sizing) && k != "topology" && k != "workload")
        name += (name.empty() ? "" : " \u00b7 ") +
                k.substr(k.rfind('.') == std::string::npos ? 0 : k.rfind('.') + 1) + "=" +
                short_value(k, cell(r, k));
    if (name.empty()) name = cell(r, "topology") + " \u00b7 " + cell(r, "workload");
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& s) { return s.first == name; });
    if (it == out.end()) it = out.insert(out.end(), {name, {}});
    it->second.push_back(r);
  }
  for (auto& [name, rows] : out)
    std::stable_sort(rows.begin(), rows.end(),
                     [&](size_t a, size_t b) { return num(a, "devices") < num(b, "devices"); });
  return out;
}

bool StudyView::scales() const {
  for (const auto& [name, rows] : series()) {
    std::set<double> devices;
    for (size_t r : rows) devices.insert(num(r, "devices").value_or(0));
    if (devices.size() >= 2) return true;
  }
  return false;
}

size_t StudyView::baseline() const {
  for (size_t r = 0; r < t.rows.size() && !t.baseline.empty(); ++r)
    if (cell(r, "case") == t.baseline || label(r) == t.baseline) return r;
  return 0;
}

}  // namespace podsim::report::html
