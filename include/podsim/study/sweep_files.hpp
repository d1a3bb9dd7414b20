// The files of one sweep (or shard) in --out, and how a sweep reads them back on --resume.
//
//   <stem>.partial.csv   header, then one whole line per finished point, appended as points finish
//   <stem>.csv           the complete results, one row per point in point order (written at the end)
//   <stem>.lock          held while a sweep runs (output_lock.hpp)
//   <stem>.running-PID/  scratch where the workers of sweep PID leave their rows
#pragma once

#include <map>
#include <string>
#include <vector>

#include "podsim/study/results.hpp"
#include "podsim/study/study.hpp"

namespace podsim::study {

// Rows that are answers about a point (ok, out_of_memory, invalid, ...). `failed` and `error` rows record
// that podsim broke and `skipped` rows are regenerated from the study's filters: none is carried over.
bool is_result_status(const std::string& status);

// What a resumed sweep keeps from the files of an earlier run.
struct PreviousRows {
  std::map<std::string, ResultRow> rows;  // by point id, rebuilt for the current study
  int dropped = 0;                        // rows of points not in the study (or this shard) any more
  int rerun = 0;                          // failed/error rows: their points run again
};

// Reads `files` in order (missing ones are skipped); the last complete row of each point wins. Columns
// are matched by name, so a study whose axes were reordered or reduced still resumes; the point, id and
// axis cells come from the current study. InputError when a file lacks a column the study needs.
PreviousRows read_previous_rows(const Study& study, const std::vector<const Point*>& points,
                                const std::vector<std::string>& files);

// Appends whole lines to a file opened with O_APPEND: one write() per line, so a kill leaves at most a
// torn last line and never interleaves two rows.
class LineAppender {
 public:
  explicit LineAppender(const std::string& path);
  ~LineAppender();
  LineAppender(const LineAppender&) = delete;
  LineAppender& operator=(const LineAppender&) = delete;
  void write(const std::string& line);

 private:
  std::string path_;
  int fd_ = -1;
};

// The complete table of `points` from the partial file (last row of each point wins), in point order.
// std::logic_error when a point has no row (the sweep lost one: a bug).
ResultsTable complete_table(const Study& study, const std::vector<const Point*>& points,
                            const std::string& partial);

// Removes what sweeps that were killed left of this stem: scratch directories `<stem>.running*` and
// half-written `<stem>.partial.csv.tmp.*` / `<stem>.csv.tmp.*` (the caller holds the lock).
void remove_stale_scratch(const std::string& stem);

}  // namespace podsim::study
