#include "podsim/engine/replay.hpp"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xbt/log.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <queue>
#include <simgrid/s4u.hpp>
#include <stdexcept>
#include <unordered_map>

#include "podsim/engine/platform.hpp"

namespace podsim::engine {
namespace {

namespace sg4 = simgrid::s4u;
using workload::Task;
using workload::TaskGraph;

// Drives the DAG: starts tasks whose dependencies are met, runs device time as timers and communication
// phases as SimGrid parallel tasks, and records when each task started and ended.
class Replayer {
 public:
  Replayer(const topology::Topology& /*topo*/, const TaskGraph& graph, const Platform& platform,
           ReplayResult& out)
      : graph_(graph), platform_(platform), out_(out) {
    const size_t n = graph.tasks.size();
    waiting_.assign(n, 0);
    successors_.resize(n);
    for (size_t i = 0; i < n; ++i)
      for (int d : graph.tasks[i].deps) {
        successors_[d].push_back(static_cast<int>(i));
        waiting_[i]++;
      }
    out_.tasks.assign(n, {});
  }

  void run() {
    for (size_t i = 0; i < graph_.tasks.size(); ++i)
      if (waiting_[i] == 0) ready_.push_back(static_cast<int>(i));
    drain_ready();
    while (!running_.empty() || !timers_.empty()) {
      double now = sg4::Engine::get_clock();
      if (!timers_.empty() && timers_.top().time <= now) {
        fire_timers();
        continue;
      }
      if (running_.empty()) {
        sg4::this_actor::sleep_until(timers_.top().time);
        fire_timers();
        continue;
      }
      double timeout = timers_.empty() ? -1.0 : timers_.top().time - now;
      ssize_t idx = sg4::Activity::wait_any_for(running_, timeout);
      if (idx >= 0) {
        int task = running_task_[idx];
        int phase = running_phase_[idx];
        running_[idx] = running_.back();
        running_task_[idx] = running_task_.back();
        running_phase_[idx] = running_phase_.back();
        running_.pop_back();
        running_task_.pop_back();
        running_phase_.pop_back();
        next_phase(task, phase + 1);
      }
      fire_timers();
    }
    if (done_ != graph_.tasks.size())
      throw std::logic_error(fmt::format("{} of {} tasks never ran: the task graph has a cycle",
                                         graph_.tasks.size() - done_, graph_.tasks.size()));
    out_.makespan = sg4::Engine::get_clock();
  }

 private:
  struct Timer {
    double time;
    long long seq;
    int task;
    int phase;  // -1: device time done; k >= 0: latency of phase k done
    bool operator<(const Timer& o) const { return time != o.time ? time > o.time : seq > o.seq; }
  };

  void fire_timers() {
    double now = sg4::Engine::get_clock();
    while (!timers_.empty() && timers_.top().time <= now * (1 + 1e-12) + 1e-15) {
      Timer t = timers_.top();
      timers_.pop();
      if (t.phase < 0) {
        out_.tasks[t.task].compute_end = now;
        next_phase(t.task, 0);
      } else {
        launch(t.task, t.phase);
      }
    }
    drain_ready();
  }

  void start(int id) {
    const Task& t = graph_.tasks[id];
    double now = sg4::Engine::get_clock();
    out_.tasks[id].start = now;
    if (t.compute_seconds > 0) {
      timers_.push({now + t.compute_seconds, seq_++, id, -1});
      return;
    }
    out_.tasks[id].compute_end = now;
    next_phase(id, 0);
  }

  // Phase k of the task's plan: its software latency (timer), then its flows (parallel task).
  void next_phase(int id, int k) {
    const Task& t = graph_.tasks[id];
    if (t.plan < 0 || k >= static_cast<int>(graph_.plans[t.plan].size())) {
      finish(id);
      return;
    }
    const auto& phase = graph_.plans[t.plan][k];
    if (phase.latency > 0) {
      timers_.push({sg4::Engine::get_clock() + phase.latency, seq_++, id, k});
      return;
    }
    launch(id, k);
  }

  void launch(int id, int k) {
    const auto& phase = graph_.plans[graph_.tasks[id].plan][k];
    hosts_.clear();
    index_.clear();
    for (const auto& f : phase.flows) {
      if (f.src == f.dst || f.bytes <= 0) continue;
      for (int d : {f.src, f.dst})
        if (index_.emplace(d, static_cast<int>(hosts_.size())).second)
          hosts_.push_back(platform_.device_host[d]);
    }
    if (hosts_.empty()) {
      next_phase(id, k + 1);
      return;
    }
    const size_t n = hosts_.size();
    std::vector<double> bytes(n * n, 0.0), flops(n, 0.0);
    for (const auto& f : phase.flows) {
      if (f.src == f.dst || f.bytes <= 0) continue;
      bytes[index_[f.src] * n + index_[f.dst]] += f.bytes;
    }
    sg4::ExecPtr exec =
        sg4::Exec::init()->set_hosts(hosts_)->set_flops_amounts(flops)->set_bytes_amounts(bytes);
    exec->start();
    running_.push_back(exec);
    running_task_.push_back(id);
    running_phase_.push_back(k);
    out_.simgrid_activities++;
  }

  void finish(int id) {
    out_.tasks[id].end = sg4::Engine::get_clock();
    done_++;
    for (int s : successors_[id])
      if (--waiting_[s] == 0) ready_.push_back(s);
  }

  void drain_ready() {
    // Starting a task can finish it at once (zero-time markers), which readies more tasks.
    while (!ready_.empty()) {
      int id = ready_.front();
      ready_.pop_front();
      start(id);
    }
  }

  const TaskGraph& graph_;
  const Platform& platform_;
  ReplayResult& out_;
  std::vector<int> waiting_;
  std::vector<std::vector<int>> successors_;
  std::deque<int> ready_;
  std::priority_queue<Timer> timers_;
  long long seq_ = 0;
  std::vector<sg4::ActivityPtr> running_;
  std::vector<int> running_task_, running_phase_;
  std::vector<sg4::Host*> hosts_;
  std::unordered_map<int, int> index_;
  size_t done_ = 0;
};

void write_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(3);
    p += n;
    size -= static_cast<size_t>(n);
  }
}

bool read_all(int fd, void* data, size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = ::read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

ReplayResult replay_in_process(const topology::Topology& topo, const TaskGraph& graph) {
  int argc = 1;
  char name[] = "podsim";
  char* argv[] = {name, nullptr};
  sg4::Engine engine(&argc, argv);
  xbt_log_control_set("root.thresh:warning");
  engine.set_config("host/model:ptask_L07");
  engine.set_config("network/crosstraffic:0");
  ReplayResult result;
  Platform platform = build_platform(topo, graph);
  result.hosts = platform.hosts;
  result.links = platform.links;
  std::string error;
  sg4::Actor::create("replay", platform.driver, [&] {
    try {
      Replayer(topo, graph, platform, result).run();
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
  engine.run();
  if (!error.empty()) throw std::runtime_error(error);
  return result;
}

ReplayResult replay(const topology::Topology& topo, const TaskGraph& graph) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(fmt::format("pipe: {}", std::strerror(errno)));
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {
    ::close(fds[0]);
    int status = 0;
    try {
      ReplayResult r = replay_in_process(topo, graph);
      long long n = static_cast<long long>(r.tasks.size());
      write_all(fds[1], &status, sizeof status);
      write_all(fds[1], &r.makespan, sizeof r.makespan);
      write_all(fds[1], &r.simgrid_activities, sizeof r.simgrid_activities);
      write_all(fds[1], &r.hosts, sizeof r.hosts);
      write_all(fds[1], &r.links, sizeof r.links);
      write_all(fds[1], &n, sizeof n);
      write_all(fds[1], r.tasks.data(), sizeof(TaskTimes) * r.tasks.size());
    } catch (const std::exception& e) {
      status = 1;
      std::string msg = e.what();
      long long len = static_cast<long long>(msg.size());
      write_all(fds[1], &status, sizeof status);
      write_all(fds[1], &len, sizeof len);
      write_all(fds[1], msg.data(), msg.size());
    }
    ::close(fds[1]);
    _exit(0);
  }
  ::close(fds[1]);
  ReplayResult r;
  int status = -1;
  bool ok = read_all(fds[0], &status, sizeof status);
  std::string error;
  if (ok && status == 0) {
    long long n = 0;
    ok = read_all(fds[0], &r.makespan, sizeof r.makespan) &&
         read_all(fds[0], &r.simgrid_activities, sizeof r.simgrid_activities) &&
         read_all(fds[0], &r.hosts, sizeof r.hosts) && read_all(fds[0], &r.links, sizeof r.links) &&
         read_all(fds[0], &n, sizeof n);
    if (ok) {
      r.tasks.resize(static_cast<size_t>(n));
      ok = read_all(fds[0], r.tasks.data(), sizeof(TaskTimes) * r.tasks.size());
    }
  } else if (ok) {
    long long len = 0;
    if (read_all(fds[0], &len, sizeof len)) {
      error.resize(static_cast<size_t>(len));
      read_all(fds[0], error.data(), error.size());
    }
  }
  ::close(fds[0]);
  int wstatus = 0;
  ::waitpid(pid, &wstatus, 0);
  if (!error.empty()) throw std::runtime_error("simulation failed: " + error);
  if (!ok) {
    if (WIFSIGNALED(wstatus))
      throw std::runtime_error(fmt::format("simulation process died with signal {}", WTERMSIG(wstatus)));
    throw std::runtime_error("simulation process ended without a result");
  }
  return r;
}

}  // namespace podsim::engine
