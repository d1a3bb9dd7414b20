#include "podsim/driver/sweep_output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "podsim/report/html.hpp"
#include "podsim/report/writers.hpp"

namespace podsim::driver {
namespace {

namespace fs = std::filesystem;

int column_of(const study::ResultsTable& table, const std::string& name) {
  auto it = std::find(table.columns.begin(), table.columns.end(), name);
  return it == table.columns.end() ? -1 : static_cast<int>(it - table.columns.begin());
}

}  // namespace

void write_sweep_json(const study::Study& s, const std::string& dir) {
  nlohmann::ordered_json j = {{"name", s.name},
                              {"description", s.description},
                              {"study_file", fs::absolute(s.file).lexically_normal().string()},
                              {"axis_keys", s.axis_keys},
                              {"points", s.points.size()},
                              {"baseline", s.baseline}};
  report::atomic_write(dir + "/sweep.json", j.dump(2) + "\n");
}

std::string write_sweep_report(const std::string& dir, const study::ResultsTable& table,
                               const std::string& name, const std::string& description,
                               const std::vector<std::string>& axis_keys, const std::string& baseline) {
  report::ReportTable rt;
  rt.baseline = baseline;
  rt.columns = table.columns;
  rt.axis_keys = axis_keys;
  for (const auto& r : table.rows) rt.rows.push_back(r.cells);
  std::sort(rt.rows.begin(), rt.rows.end(),
            [](const auto& a, const auto& b) { return std::stoi(a[0]) < std::stoi(b[0]); });
  int status = column_of(table, "status"), ok = 0;
  for (const auto& r : table.rows)
    if (status >= 0 && status < static_cast<int>(r.cells.size()) && r.cells[status] == "ok") ok++;
  std::string subtitle = fmt::format("{}{}{} points, {} simulated", description,
                                     description.empty() ? "" : " — ", table.rows.size(), ok);
  std::string path = dir + "/report.html";
  report::atomic_write(path, report::sweep_report_html(name, subtitle, rt));
  return path;
}

std::string results_table_text(const study::ResultsTable& table, const std::vector<std::string>& axis_keys) {
  std::vector<std::string> cols = {"point"};
  cols.insert(cols.end(), axis_keys.begin(), axis_keys.end());
  for (const char* c : {"status", "devices", "step_time_s", "tflops_per_device", "mfu",
                        "memory_per_device_GiB", "tokens_per_s", "samples_per_s"})
    cols.push_back(c);
  std::vector<std::vector<std::string>> grid;
  std::vector<std::string> head;
  for (const auto& c : cols)
    head.push_back(c.substr(c.rfind('.') == std::string::npos ? 0 : c.rfind('.') + 1));
  grid.push_back(head);
  for (const auto& r : table.rows) {
    std::vector<std::string> line;
    for (const auto& c : cols) {
      int i = column_of(table, c);
      std::string v = i >= 0 && i < static_cast<int>(r.cells.size()) ? r.cells[i] : "";
      if (c.size() > 5 && c.compare(c.size() - 5, 5, "_file") == 0)  // a file: its base name
        v = fs::path(v).stem().string();
      line.push_back(v);
    }
    grid.push_back(line);
  }
  std::vector<size_t> width(cols.size(), 0);
  for (const auto& line : grid)
    for (size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], line[i].size());
  std::string text;
  size_t shown = 0;
  for (const auto& line : grid) {
    if (shown++ > 41) {
      text += fmt::format("  ... {} more rows in results.csv\n", grid.size() - 42);
      break;
    }
    text += " ";
    for (size_t i = 0; i < line.size(); ++i) {  // right-aligned in its column
      text += ' ';
      text.append(width[i] - line[i].size(), ' ');
      text += line[i];
    }
    text += "\n";
  }
  return text;
}

}  // namespace podsim::driver
