// What the study and sweep tests share: scratch directories, a small study, a stand-in for the simulator.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "podsim/study/results.hpp"
#include "podsim/study/study.hpp"
#include "podsim/study/sweep.hpp"

namespace podsim::study::test_support {

namespace fs = std::filesystem;

inline std::string temp_dir(const std::string& name) {
  auto dir = fs::temp_directory_path() / ("podsim-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

inline std::string write(const std::string& dir, const std::string& name, const std::string& text) {
  std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

inline std::string read(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline const char* kStudy = R"(name: test study
topology: t.yaml
workload: w.yaml
set: {workload.parallel.virtual_stages: 2}
axes:
  - zip: {topology.nodes: [1, 2, 4], workload.training.global_batch: [8, 16, 32]}
  - grid: {workload.parallel.pp: [2, 4]}
filters:
  - workload.parallel.pp <= topology.nodes * 2
)";

// Stand-in for the simulator: a row whose step time is a function of the point.
inline ResultRow fake_runner(const Study& s, const Point& p) {
  ResultRow row = unrun_row(s, p, "ok", "");
  auto cols = results_columns(s);
  for (size_t i = 0; i < cols.size(); ++i)
    if (cols[i] == "step_time_s")  // from the point's values, not its index: reused rows must stay right
      row.cells[i] = std::to_string(std::stoi(p.values.at("topology.nodes")) * 0.5 +
                                    std::stoi(p.values.at("workload.parallel.pp")) * 0.125);
  return row;
}

inline SweepOptions quiet_options(const std::string& out, bool resume = false) {
  SweepOptions o;
  o.out = out;
  o.resume = resume;
  o.progress = false;
  return o;
}

// The results file of an uninterrupted sweep of `s` with the stand-in simulator.
inline std::string reference_results(const Study& s, const std::string& out) {
  auto outcome = run_sweep(s, quiet_options(out), [&](const Point& p) { return fake_runner(s, p); });
  return read(outcome.results_file);
}

inline std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace podsim::study::test_support
