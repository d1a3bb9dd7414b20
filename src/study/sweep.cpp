#include "podsim/study/sweep.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>

#include "podsim/core/csv_table.hpp"
#include "podsim/core/error.hpp"
#include "podsim/report/writers.hpp"
#include "podsim/study/output_lock.hpp"
#include "podsim/study/sweep_files.hpp"

namespace podsim::study {
namespace {

namespace fs = std::filesystem;

volatile std::sig_atomic_t g_signal = 0;  // the signal that asked the sweep to stop, 0 while running
extern "C" void on_interrupt(int signal) {
  g_signal = signal;
}

// SIGINT (Ctrl-C), SIGTERM (Slurm, kill) and SIGHUP (a closed terminal) stop the sweep cleanly; without
// SA_RESTART they interrupt waitpid, so the loop notices at once.
class StopSignals {
 public:
  StopSignals() {
    struct sigaction action {};
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    g_signal = 0;
    for (size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &action, &old_[i]);
  }
  ~StopSignals() {
    for (size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &old_[i], nullptr);
  }
  static bool is_stop_request(int signal) {
    return std::find(kSignals.begin(), kSignals.end(), signal) != kSignals.end() || signal == SIGQUIT;
  }
  static void reset_in_child() {
    for (int s : kSignals) std::signal(s, SIG_DFL);
  }

 private:
  static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> old_{};
};

std::string duration(double s) {
  if (s < 60) return fmt::format("{:.0f}s", s);
  if (s < 3600) return fmt::format("{}m{:02d}s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  return fmt::format("{}h{:02d}m", static_cast<int>(s) / 3600, static_cast<int>(s) % 3600 / 60);
}

void write_file(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || ::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size()) || ::close(fd))
    ::_exit(4);
}

// A worker process: simulates one point and leaves its row in the scratch directory. It dies with the
// sweep (PR_SET_PDEATHSIG), so a killed sweep leaves no orphan writing into a directory it no longer owns.
[[noreturn]] void run_worker(const Study& study, const Point& p, const PointRunner& runner,
                             const std::string& scratch, pid_t sweep) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != sweep) ::_exit(3);
  StopSignals::reset_in_child();
  ResultRow row;
  try {
    row = runner(p);
  } catch (const std::exception& e) {
    row = unrun_row(study, p, "failed", fmt::format("the simulation threw: {}", e.what()));
  } catch (...) {
    row = unrun_row(study, p, "failed", "the simulation threw something that is not a std::exception");
  }
  std::string tmp = fmt::format("{}/{}.row.tmp", scratch, p.index);
  write_file(tmp, row_line(row));
  if (::rename(tmp.c_str(), fmt::format("{}/{}.row", scratch, p.index).c_str()) != 0) ::_exit(4);
  ::_exit(0);
}

// The points in flight, one worker process each.
class Workers {
 public:
  Workers(const Study& study, const PointRunner& runner, std::string scratch)
      : study_(study), runner_(runner), scratch_(std::move(scratch)) {
    fs::create_directories(scratch_);
  }
  ~Workers() {
    std::error_code ec;
    fs::remove_all(scratch_, ec);
  }
  size_t size() const { return running_.size(); }

  void start(const Point* p) {
    std::fflush(nullptr);
    pid_t sweep = ::getpid(), pid = ::fork();
    if (pid < 0) throw std::runtime_error(fmt::format("fork failed: {}", std::strerror(errno)));
    if (pid == 0) run_worker(study_, *p, runner_, scratch_, sweep);
    running_[pid] = p;
  }

  // Waits for one worker: its point and the row line it leaves ("" when the point must not be recorded).
  // Nothing when the wait was interrupted by a signal.
  std::optional<std::pair<const Point*, std::string>> wait_one() {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0 && errno == ECHILD) throw std::logic_error("sweep: a worker process went missing");
    auto it = pid > 0 ? running_.find(pid) : running_.end();
    if (it == running_.end()) return std::nullopt;
    const Point* p = it->second;
    running_.erase(it);
    return std::make_pair(p, take_row(*p, status));
  }

  // Asks the workers still running to stop and collects those that finished anyway.
  void stop_all(const std::function<void(const Point&, const std::string&)>& record) {
    for (const auto& [pid, p] : running_) ::kill(pid, SIGTERM);
    while (!running_.empty())
      if (auto done = wait_one(); done && !done->second.empty()) record(*done->first, done->second);
  }

 private:
  std::string take_row(const Point& p, int status) {
    std::string file = fmt::format("{}/{}.row", scratch_, p.index);
    std::stringstream text;
    text << std::ifstream(file, std::ios::binary).rdbuf();
    std::error_code ec;
    fs::remove(file, ec);
    std::string line = text.str();
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !line.empty() && line.back() == '\n') return line;
    // Stopped from outside (Ctrl-C or Slurm signal the whole process group): not a result; --resume reruns
    // it.
    if (g_signal || (WIFSIGNALED(status) && StopSignals::is_stop_request(WTERMSIG(status)))) {
      if (!g_signal) g_signal = WTERMSIG(status);
      return "";
    }
    std::string why = WIFSIGNALED(status)
                          ? fmt::format("the simulation process crashed with signal {} ({})",
                                        WTERMSIG(status), ::strsignal(WTERMSIG(status)))
                          : fmt::format("the simulation process exited with status {} without a result",
                                        WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return row_line(unrun_row(study_, p, "failed", why));
  }

  const Study& study_;
  const PointRunner& runner_;
  std::string scratch_;
  std::map<pid_t, const Point*> running_;
};

class ProgressLine {
 public:
  ProgressLine(bool shown, size_t total) : shown_(shown), total_(total) { show(""); }
  ~ProgressLine() {
    if (shown_) fmt::print(stderr, "\r\033[K");
  }
  void advance(const std::string& label) {
    done_++;
    show(label);
  }

 private:
  void show(const std::string& label) const {
    if (!shown_) return;
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    std::string eta = done_ ? duration(elapsed / done_ * static_cast<double>(total_ - done_)) : "?";
    fmt::print(stderr, "\r\033[K[{}/{}] {:.0f}%  elapsed {}  ETA {}  {}", done_, total_,
               total_ ? 100.0 * done_ / total_ : 100.0, duration(elapsed), eta, label.substr(0, 60));
  }

  bool shown_;
  size_t total_, done_ = 0;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

void count(SweepOutcome& outcome, const std::string& status) {
  if (status == "ok")
    outcome.ran++;
  else if (status == "invalid" || status == "skipped")
    outcome.skipped++;
  else if (status == "failed" || status == "error")
    outcome.failed++;
  else
    outcome.infeasible++;
}

// Runs `todo`, appending each finished row to `out`, until all are done or a stop signal arrives.
void run_points(const Study& study, const SweepOptions& options, const std::vector<const Point*>& todo,
                const PointRunner& runner, LineAppender& out, SweepOutcome& outcome) {
  const std::string header = header_line(results_columns(study));
  ProgressLine progress(options.progress, todo.size());
  auto record = [&](const Point& p, const std::string& line) {
    out.write(line);
    count(outcome, parse_csv(header + line, "a worker's row").text(0, "status"));
    progress.advance(p.label());
  };
  StopSignals stop;
  Workers workers(study, runner, fmt::format("{}.running-{}", results_stem(options), ::getpid()));
  size_t next = 0;
  while ((next < todo.size() || workers.size() > 0) && !g_signal) {
    while (next < todo.size() && workers.size() < static_cast<size_t>(options.jobs) && !g_signal) {
      const Point* p = todo[next++];
      if (p->skipped.empty())
        workers.start(p);
      else
        record(*p, row_line(unrun_row(study, *p, "skipped", p->skipped)));
    }
    if (workers.size() == 0) continue;
    if (auto done = workers.wait_one(); done && !done->second.empty()) record(*done->first, done->second);
  }
  if (g_signal && (next < todo.size() || workers.size() > 0)) {  // a signal after the last point: done
    workers.stop_all(record);
    outcome.interrupted = true;
    outcome.signal = g_signal;
  }
}

void check_options(const SweepOptions& o) {
  if (o.jobs < 1) throw InputError(fmt::format("--jobs {}: expected 1 or more worker processes", o.jobs));
  if (o.shards < 1 || o.shard < 0 || o.shard >= o.shards)
    throw InputError(fmt::format("--shard {}/{}: expected I/N with 0 <= I < N", o.shard, o.shards));
}

}  // namespace

std::string results_stem(const SweepOptions& o) {
  return o.shards > 1 ? fmt::format("{}/results.shard-{}-of-{}", o.out, o.shard, o.shards)
                      : o.out + "/results";
}

SweepOutcome run_sweep(const Study& study, const SweepOptions& options, const PointRunner& runner) {
  check_options(options);
  fs::create_directories(options.out);
  const std::string stem = results_stem(options);
  const std::string partial = stem + ".partial.csv", final_file = stem + ".csv";
  OutputLock lock(stem + ".lock", options.out);
  if (!options.resume && (fs::exists(final_file) || fs::exists(partial)))
    throw InputError(
        fmt::format("{}: results from an earlier sweep are there; use --resume to continue it or another "
                    "--out directory",
                    options.out));
  remove_stale_scratch(stem);
  std::vector<const Point*> points;
  for (const auto& p : study.points)
    if (p.index % options.shards == options.shard) points.push_back(&p);

  PreviousRows previous;
  if (options.resume) previous = read_previous_rows(study, points, {final_file, partial});
  if (options.note && previous.dropped)
    options.note(fmt::format("dropped {} rows of points that are no longer in the study", previous.dropped));
  if (options.note && previous.rerun)
    options.note(fmt::format("running {} failed points again", previous.rerun));
  // The partial file restarts with the rows kept, then results.csv goes: results.csv always holds a
  // complete sweep, and a kill between the two steps leaves rows that resume reads twice, harmlessly.
  std::string kept = header_line(results_columns(study));
  for (const auto* p : points)
    if (auto it = previous.rows.find(p->id); it != previous.rows.end()) kept += row_line(it->second);
  report::atomic_write(partial, kept);
  fs::remove(final_file);
  if (options.on_locked) options.on_locked();

  SweepOutcome outcome;
  outcome.total = static_cast<int>(points.size());
  outcome.reused = static_cast<int>(previous.rows.size());
  outcome.dropped = previous.dropped;
  std::vector<const Point*> todo;
  for (const auto* p : points)
    if (!previous.rows.count(p->id)) todo.push_back(p);
  {
    LineAppender out(partial);
    run_points(study, options, todo, runner, out, outcome);
  }
  if (outcome.interrupted) return outcome;
  write_results(final_file, complete_table(study, points, partial));
  fs::remove(partial);
  outcome.results_file = final_file;
  return outcome;
}

}  // namespace podsim::study
