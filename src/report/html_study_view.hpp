// Private to the study report (html_study*.cpp): reading a results table by column name, point labels,
// and which rows form a scaling series.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "podsim/report/html.hpp"

namespace podsim::report::html {

struct StudyView {
  const ReportTable& t;
  explicit StudyView(const ReportTable& table) : t(table) {}
  int col(const std::string& name) const;
  std::string cell(size_t row, const std::string& name) const;
  std::optional<double> num(size_t row, const std::string& name) const;
  bool ok(size_t row) const { return cell(row, "status") == "ok"; }
  // "baseline", or "tp=8 pp=16" (files by base name); "workload on topology" without axes.
  std::string label(size_t row) const;
  // Distinct values of an axis key, in order of first appearance.
  std::vector<std::string> values_of(const std::string& key) const;
  // Throughput column compared across points: tokens_per_s when any point has it, else samples_per_s.
  std::string throughput_column() const;
  // Rows of each scaling series (same machine, model and non-sizing axes), in order of first appearance.
  std::vector<std::pair<std::string, std::vector<size_t>>> series() const;
  // True when some series has simulated points at two or more device counts.
  bool scales() const;
  // The baseline row: the one labelled ReportTable::baseline, else the first row.
  size_t baseline() const;
};

std::string short_value(const std::string& key, const std::string& value);  // files by base name

// The sections of the study report (each a card, or "" when it does not apply).
std::string scaling_cards(const StudyView& v, int& charts);
std::string comparison_card(const StudyView& v, int& charts);
std::string heatmap_card(const StudyView& v, int& charts);
std::string breakdown_card(const StudyView& v, int& charts);
std::string memory_card(const StudyView& v, int& charts);
std::string points_table(const StudyView& v, bool compare);
std::string study_page(const std::string& title, const std::string& subtitle, const ReportTable& table);

}  // namespace podsim::report::html
