#include "podsim/study/sweep.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "podsim/core/csv_table.hpp"
#include "podsim/core/error.hpp"

namespace podsim::study {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_interrupt(int) {
  g_interrupted = 1;
}

std::string duration(double s) {
  if (s < 60) return fmt::format("{:.0f}s", s);
  if (s < 3600) return fmt::format("{}m{:02d}s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  return fmt::format("{}h{:02d}m", static_cast<int>(s) / 3600, static_cast<int>(s) % 3600 / 60);
}

// Appends whole lines and flushes each, so a crash loses at most the line being written.
class Appender {
 public:
  Appender(const std::string& path, const std::vector<std::string>& columns, bool fresh) {
    if (!fresh) drop_partial_last_line(path);
    bool write_header = fresh || !std::filesystem::exists(path) || std::filesystem::file_size(path) == 0;
    file_ = std::fopen(path.c_str(), fresh ? "wb" : "ab");
    if (!file_) throw std::runtime_error(fmt::format("cannot write {}", path));
    if (write_header) write(header_line(columns));
  }
  ~Appender() {
    if (file_) std::fclose(file_);
  }
  void write(const std::string& line) {
    std::fwrite(line.data(), 1, line.size(), file_);
    std::fflush(file_);
  }

 private:
  // A line cut short by an interruption would glue itself to the next row appended: cut it off.
  static void drop_partial_last_line(const std::string& path) {
    if (!std::filesystem::exists(path)) return;
    std::ifstream in(path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    if (text.empty() || text.back() == '\n') return;
    size_t keep = text.rfind('\n');
    std::filesystem::resize_file(path, keep == std::string::npos ? 0 : keep + 1);
  }

  std::FILE* file_ = nullptr;
};

}  // namespace

std::string results_stem(const SweepOptions& o) {
  return o.shards > 1 ? fmt::format("{}/results.shard-{}-of-{}", o.out, o.shard, o.shards)
                      : o.out + "/results";
}

SweepOutcome run_sweep(const Study& study, const SweepOptions& options, const PointRunner& runner) {
  namespace fs = std::filesystem;
  fs::create_directories(options.out);
  const auto columns = results_columns(study);
  const std::string stem = results_stem(options);
  const std::string partial = stem + ".partial.csv", final_file = stem + ".csv";
  SweepOutcome outcome;

  // Rows already on disk (resume): complete files first, then partial ones.
  ResultsTable done;
  done.columns = columns;
  std::set<std::string> done_ids;
  if (options.resume) {
    for (const auto& f : {final_file, partial})
      if (fs::exists(f))
        for (auto& row : read_results(f, columns).rows)
          if (done_ids.insert(row.id).second) done.rows.push_back(std::move(row));
  } else if (fs::exists(final_file) || fs::exists(partial)) {
    throw InputError(
        fmt::format("{}: results from an earlier sweep are there; use --resume to continue it or another "
                    "--out directory",
                    options.out));
  }

  std::vector<const Point*> todo;
  for (const auto& p : study.points) {
    if (p.index % options.shards != options.shard) continue;
    outcome.total++;
    if (done_ids.count(p.id)) {
      outcome.reused++;
      continue;
    }
    todo.push_back(&p);
  }

  Appender out(partial, columns, !options.resume);
  // Rows reused from a complete file must survive in the partial file too, in case this run is cut short.
  if (options.resume && fs::exists(final_file))
    for (const auto& row : done.rows) out.write(row_line(row));
  if (options.resume && fs::exists(final_file)) fs::remove(final_file);

  const std::string scratch = stem + ".running";  // per shard: shards may share the directory
  fs::create_directories(scratch);
  struct sigaction action {
  }, old_int{}, old_term{};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &old_int);
  sigaction(SIGTERM, &action, &old_term);
  g_interrupted = 0;

  std::map<pid_t, const Point*> running;
  size_t next = 0;
  auto started = std::chrono::steady_clock::now();
  int finished = 0;
  auto progress = [&](const Point* last) {
    if (!options.progress) return;
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    int remaining = static_cast<int>(todo.size()) - finished;
    std::string eta = finished ? duration(elapsed / finished * remaining) : "?";
    std::fprintf(stderr, "\r\033[K[%d/%zu] %.0f%%  elapsed %s  ETA %s  %s", finished, todo.size(),
                 todo.empty() ? 100.0 : 100.0 * finished / todo.size(), duration(elapsed).c_str(),
                 eta.c_str(), last ? last->label().substr(0, 60).c_str() : "");
  };
  progress(nullptr);

  while ((next < todo.size() || !running.empty()) && !g_interrupted) {
    while (next < todo.size() && static_cast<int>(running.size()) < std::max(1, options.jobs) &&
           !g_interrupted) {
      const Point* p = todo[next++];
      if (!p->skipped.empty()) {
        out.write(row_line(unrun_row(study, *p, "skipped", p->skipped)));
        outcome.skipped++;
        finished++;
        continue;
      }
      std::fflush(nullptr);
      pid_t pid = ::fork();
      if (pid < 0) throw std::runtime_error("fork failed");
      if (pid == 0) {
        std::signal(SIGINT, SIG_DFL);
        std::signal(SIGTERM, SIG_DFL);
        ResultRow row = runner(*p);
        std::string tmp = fmt::format("{}/{}.row.tmp", scratch, p->index);
        {
          std::ofstream f(tmp, std::ios::binary);
          f << row_line(row);
        }
        fs::rename(tmp, fmt::format("{}/{}.row", scratch, p->index));
        _exit(0);
      }
      running[pid] = p;
    }
    if (running.empty()) continue;
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) continue;  // EINTR: the loop checks g_interrupted
    auto it = running.find(pid);
    if (it == running.end()) continue;
    const Point* p = it->second;
    running.erase(it);
    std::string row_file = fmt::format("{}/{}.row", scratch, p->index);
    std::ifstream f(row_file, std::ios::binary);
    std::stringstream line;
    line << f.rdbuf();
    std::string text = line.str();
    f.close();
    fs::remove(row_file);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !text.empty()) {
      out.write(text);
      std::string row_status = parse_csv(header_line(columns) + text, row_file).text(0, "status");
      if (row_status == "invalid")
        outcome.skipped++;
      else if (row_status == "ok")
        outcome.ran++;
      else
        outcome.infeasible++;
    } else {
      std::string why = WIFSIGNALED(status)
                            ? fmt::format("the simulation process died with signal {}", WTERMSIG(status))
                            : "the simulation process ended without a result";
      out.write(row_line(unrun_row(study, *p, "error", why)));
      outcome.failed++;
    }
    finished++;
    progress(p);
  }
  if (g_interrupted) {
    for (auto& [pid, p] : running) ::kill(pid, SIGTERM);
    for (auto& [pid, p] : running) ::waitpid(pid, nullptr, 0);
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  if (options.progress) std::fprintf(stderr, "\r\033[K");
  std::error_code ec;
  fs::remove_all(scratch, ec);
  if (g_interrupted) {
    outcome.interrupted = true;
    return outcome;
  }
  // Complete: sort the partial file into the final one.
  ResultsTable all = read_results(partial, columns);
  write_results(final_file, all);
  fs::remove(partial);
  outcome.results_file = final_file;
  return outcome;
}

}  // namespace podsim::study
