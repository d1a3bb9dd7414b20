#include "podsim/study/sweep_files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "podsim/core/error.hpp"

namespace podsim::study {
namespace {

namespace fs = std::filesystem;

int index_of(const std::vector<std::string>& columns, const std::string& name) {
  auto it = std::find(columns.begin(), columns.end(), name);
  return it == columns.end() ? -1 : static_cast<int>(it - columns.begin());
}

// For each column of the current study: where its cell is in an older file, or -1 when the current study
// supplies it (point, point_id, axis values). InputError when an older file lacks a result column.
std::vector<int> column_map(const Study& study, const std::vector<std::string>& columns,
                            const ResultsTable& old, const std::string& file) {
  std::vector<int> map;
  for (const auto& c : columns) {
    bool from_study = c == "point" || c == "point_id" ||
                      std::find(study.axis_keys.begin(), study.axis_keys.end(), c) != study.axis_keys.end();
    int j = from_study ? -1 : index_of(old.columns, c);
    if (!from_study && j < 0)
      throw InputError(fmt::format(
          "{}: has no column '{}' (written by another podsim version?); move it away to start the sweep "
          "afresh, or use another --out directory",
          file, c));
    map.push_back(j);
  }
  return map;
}

// An older row of point `p`, in the current study's columns.
ResultRow rebuild(const Study& study, const Point& p, const ResultRow& old, const std::vector<int>& map) {
  ResultRow row = unrun_row(study, p, "", "");
  for (size_t i = 0; i < map.size(); ++i)
    if (map[i] >= 0) row.cells[i] = map[i] < static_cast<int>(old.cells.size()) ? old.cells[map[i]] : "";
  return row;
}

}  // namespace

bool is_result_status(const std::string& status) {
  return !status.empty() && status != "failed" && status != "error" && status != "skipped";
}

PreviousRows read_previous_rows(const Study& study, const std::vector<const Point*>& points,
                                const std::vector<std::string>& files) {
  std::map<std::string, const Point*> by_id;
  for (const auto* p : points) by_id[p->id] = p;
  const auto columns = results_columns(study);
  const int status_col = index_of(columns, "status");
  std::map<std::string, ResultRow> last;  // by id, every status
  std::set<std::string> gone;
  for (const auto& file : files) {
    if (!fs::exists(file)) continue;
    ResultsTable old = read_results(file);  // a torn last line is ignored there
    auto map = column_map(study, columns, old, file);
    for (const auto& r : old.rows) {
      auto it = by_id.find(r.id);
      if (it == by_id.end()) {
        gone.insert(r.id);
        continue;
      }
      last[r.id] = rebuild(study, *it->second, r, map);
    }
  }
  PreviousRows out;
  out.dropped = static_cast<int>(gone.size());
  for (auto& [id, row] : last) {
    if (!by_id.at(id)->skipped.empty()) continue;  // regenerated from the current filters
    const std::string& status = row.cells[status_col];
    if (is_result_status(status))
      out.rows.emplace(id, std::move(row));
    else if (status != "skipped")
      out.rerun++;
  }
  return out;
}

LineAppender::LineAppender(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd_ < 0) throw std::runtime_error(fmt::format("cannot append to {}: {}", path, std::strerror(errno)));
}

LineAppender::~LineAppender() {
  if (fd_ >= 0) ::close(fd_);
}

void LineAppender::write(const std::string& line) {
  size_t done = 0;
  while (done < line.size()) {  // one write() unless the disk fills up or a signal lands mid-write
    ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(fmt::format("cannot write {}: {}", path_, std::strerror(errno)));
    done += static_cast<size_t>(n);
  }
}

ResultsTable complete_table(const Study& study, const std::vector<const Point*>& points,
                            const std::string& partial) {
  ResultsTable t;
  t.columns = results_columns(study);
  std::map<std::string, ResultRow> last;
  for (auto& r : read_results(partial, t.columns).rows) last[r.id] = std::move(r);
  for (const auto* p : points) {
    auto it = last.find(p->id);
    if (it == last.end())
      throw std::logic_error(fmt::format("{}: the sweep finished without a row for point {} ({})", partial,
                                         p->index, p->label()));
    t.rows.push_back(std::move(it->second));
  }
  return t;
}

void remove_stale_scratch(const std::string& stem) {
  fs::path dir = fs::path(stem).parent_path();
  std::string base = fs::path(stem).filename().string();
  // Only this stem's own leftovers: other shards may be writing theirs in the same directory right now.
  const std::vector<std::string> prefixes = {base + ".running", base + ".partial.csv.tmp.",
                                             base + ".csv.tmp."};
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir.empty() ? "." : dir, ec)) {
    std::string name = e.path().filename().string();
    for (const auto& prefix : prefixes)
      if (name.rfind(prefix, 0) == 0) fs::remove_all(e.path(), ec);
  }
}

}  // namespace podsim::study
