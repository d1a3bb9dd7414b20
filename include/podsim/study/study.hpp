// Study files: what-if sweeps over any --set key.
//
//   name: GPT-3 175B weak scaling
//   topology: ../../topologies/dgx-a100-superpod.yaml   # relative to the study file
//   workload: ../gpt3-175b.yaml
//   set: {workload.parallel.virtual_stages: 2}          # applied to every point
//   axes:                                               # cartesian product of the entries, first slowest
//     - zip:   {topology.nodes: [8, 16], workload.training.global_batch: [96, 192]}  # paired lists
//     - grid:  {workload.parallel.pp: [4, 8], workload.parallel.tp: [4, 8]}          # crossed lists
//     - range: {key: topology.nodes, from: 8, to: 512, times: 2}                     # or step: N
//     - cases:                                                                       # named what-ifs
//         - {name: baseline}
//         - {name: deeper-pipeline, set: {workload.parallel.pp: 16}}
//   filters:                                            # points failing one are skipped, with the reason
//     - workload.parallel.tp * workload.parallel.pp <= topology.nodes * 8
//
// `topology` and `workload` may themselves be axis keys (lists of files) to compare machines or models;
// their results columns (and names in filters) are `topology_file` and `workload_file`.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "podsim/study/expression.hpp"

namespace podsim::study {

struct Assignment {
  std::string key;     // "topology.nodes", "workload.parallel.pp", "topology", "workload"
  std::string value;   // as written (files resolved to paths relative to the working directory)
  std::string origin;  // "study.yaml:7:22: axes[0].grid.topology.nodes[1]": where the value is written
};

// A topology or workload file the study uses.
struct FileReference {
  std::string origin;      // where the study names it (file:line:col: field)
  std::string as_written;  // relative to the study file
  std::string path;        // resolved
};

struct Point {
  int index = 0;   // position in the expansion (results are sorted by it)
  std::string id;  // stable hash of the assignments: identifies the point across runs
  std::string topology_file, workload_file;
  std::vector<Assignment> sets;               // every --set of the point (fixed ones first, then axes)
  std::map<std::string, std::string> values;  // axis key -> value, for results columns and filters
  std::string skipped;                        // the filter that excluded the point, empty when it runs
  std::string label() const;                  // "topology.nodes=8 workload.parallel.pp=4"
};

struct Study {
  std::string name, description, file;
  std::vector<std::string> axis_keys;  // in order of appearance; the results columns after "point"
  std::vector<Point> points;
  std::vector<FileReference> files;  // each file once, in order of first use
  // `goodput: FILE` (a reliability profile, resolved against the study file): every point also gets the
  // goodput columns (results_columns) of `podsim run --goodput FILE`. Empty = no goodput.
  std::string goodput_file;
  // `baseline: CASE`: the case a what-if report compares every point against (its speedup column and
  // bar chart); a value of the study's `cases` axis. Empty = the first point.
  std::string baseline;
};

// Loads and expands a study file. Throws InputError (file:line:col: field: ...) on bad input: unknown
// keys, zip lists of different lengths, ranges that never reach their end, filters that do not parse
// (or nest more than 100 levels deep) or name unknown keys, more than 100000 points, a value repeated in
// an axis (or any two points that are the same point: they would run twice and break `podsim merge`).
// Files are not opened here: see check_files_exist.
Study load_study(const std::string& path);
// The same from YAML text (`from_file` false) named `path`, with relative files resolved against `base_dir`.
Study load_study_text(const std::string& text, const std::string& path, const std::string& base_dir,
                      bool from_file = false);

// Throws InputError naming the study file, line, field and path of the first topology or workload file
// that does not exist, so a sweep refuses at once rather than recording every point as invalid.
void check_files_exist(const Study& study);

}  // namespace podsim::study
