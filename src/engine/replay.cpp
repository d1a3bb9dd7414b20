#include "podsim/engine/replay.hpp"

#include <fmt/format.h>
#include <pthread.h>
#include <xbt/log.h>

#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <queue>
#include <simgrid/s4u.hpp>
#include <stdexcept>
#include <unordered_map>

#include "phase_load_cache.hpp"
#include "platform.hpp"
#include "podsim/core/error.hpp"
#include "podsim/core/subprocess.hpp"
#include "podsim/plan/phase_cost.hpp"
#include "result_wire.hpp"
#include "sparse_handoff.hpp"

namespace podsim::engine {
namespace {

namespace sg4 = simgrid::s4u;
using plan::Task;
using plan::TaskGraph;

// Drives the DAG: starts tasks whose dependencies are met, runs device time as timers and communication
// phases on the network, and records when each task started and ended.
//
// A phase in flight is a "flight". A phase that starts while none of its link directions carries another
// flight runs in closed form (a timer: route latency + the most loaded link's bytes / bandwidth), which is
// exactly what SimGrid's ptask_L07 model computes for it alone. The moment another phase needs one of its
// links, the closed-form flight is handed to SimGrid with the bytes it has left, and from then on the two
// share the link max-min fairly as any two SimGrid phases do. So every contention is arbitrated by SimGrid,
// and phases that are alone on their links (most tensor-parallel rings) do not pay for its solver.
class Replayer {
 public:
  Replayer(const topology::Topology& topo, const TaskGraph& graph, const Platform& platform,
           ReplayResult& out, const ReplayOptions& options)
      : topo_(topo),
        graph_(graph),
        platform_(platform),
        out_(out),
        options_(options),
        loads_(topo, graph),
        sparse_(topo, graph, platform) {
    const size_t n = graph.tasks.size();
    waiting_.assign(n, 0);
    successors_.resize(n);
    for (size_t i = 0; i < n; ++i)
      for (int d : graph.tasks[i].deps) {
        successors_[d].push_back(static_cast<int>(i));
        waiting_[i]++;
      }
    out_.tasks.assign(n, {});
    users_.assign(topo.links.size() * 2, 0);
    alone_owner_.assign(topo.links.size() * 2, -1);
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
        int flight = running_flight_[idx];
        running_[idx] = running_.back();
        running_flight_[idx] = running_flight_.back();
        running_.pop_back();
        running_flight_.pop_back();
        land(flight);
      }
      fire_timers();
    }
    if (done_ != graph_.tasks.size())
      throw std::logic_error(fmt::format("{} of {} tasks never ran: the task graph has a cycle",
                                         graph_.tasks.size() - done_, graph_.tasks.size()));
    out_.makespan = sg4::Engine::get_clock();
  }

 private:
  enum class TimerKind { device_done, latency_done, flight_done };
  struct Timer {
    double time;
    long long seq;
    TimerKind kind;
    int a;  // task (device_done) or flight (latency_done, flight_done)
    int b;  // the flight's generation (flight_done)
    bool operator<(const Timer& o) const { return time != o.time ? time > o.time : seq > o.seq; }
  };
  struct Flight {
    int task = -1, phase = -1;
    double start = 0, transfer = 0;  // when its bytes started to move; their closed-form time
    std::vector<int> link_dirs;      // link * 2 + (forward ? 0 : 1)
    int generation = 0;              // bumped when its closed-form timer is cancelled
  };

  void fire_timers() {
    double now = sg4::Engine::get_clock();
    while (!timers_.empty() && timers_.top().time <= now * (1 + 1e-12) + 1e-15) {
      Timer t = timers_.top();
      timers_.pop();
      switch (t.kind) {
        case TimerKind::device_done:
          out_.tasks[t.a].compute_end = now;
          next_phase(t.a, 0);
          break;
        case TimerKind::latency_done: take_off(t.a); break;
        case TimerKind::flight_done:
          if (flights_[t.a].generation == t.b) land(t.a);
          break;
      }
    }
    drain_ready();
  }

  void start(int id) {
    const Task& t = graph_.tasks[id];
    double now = sg4::Engine::get_clock();
    out_.tasks[id].start = now;
    if (t.compute_seconds > 0) {
      timers_.push({now + t.compute_seconds, seq_++, TimerKind::device_done, id, 0});
      return;
    }
    out_.tasks[id].compute_end = now;
    next_phase(id, 0);
  }

  // Phase k of the task's plan: its latency (software latency plus the largest route latency, a timer; the
  // platform's links carry no latency so that SimGrid never counts it twice), then its bytes.
  void next_phase(int id, int k) {
    const Task& t = graph_.tasks[id];
    if (t.plan < 0 || k >= static_cast<int>(graph_.plans[t.plan].size())) {
      finish(id);
      return;
    }
    const auto& phase = graph_.plans[t.plan][k];
    // The phase's closed form on an idle network: its link directions, bytes-bound time and route latency.
    const plan::PhaseLoad& load = loads_.get(t.plan, k);
    int fid = new_flight();
    Flight& fl = flights_[fid];
    fl.task = id;
    fl.phase = k;
    fl.transfer = load.transfer;
    fl.link_dirs = load.link_dirs;
    double latency = phase.latency + (fl.link_dirs.empty() ? 0 : load.wire_latency);
    if (latency > 0) {
      timers_.push({sg4::Engine::get_clock() + latency, seq_++, TimerKind::latency_done, fid, 0});
      return;
    }
    take_off(fid);
  }

  // The flight's bytes start to move: in closed form when its links are free, in SimGrid otherwise.
  void take_off(int fid) {
    Flight& fl = flights_[fid];
    if (fl.link_dirs.empty()) {  // nothing to move (only latency)
      land(fid);
      return;
    }
    fl.start = sg4::Engine::get_clock();
    bool alone = options_.closed_form_when_alone;
    for (int ld : fl.link_dirs) alone = alone && users_[ld] == 0;
    for (int ld : fl.link_dirs) users_[ld]++;
    if (alone) {
      for (int ld : fl.link_dirs) alone_owner_[ld] = fid;
      timers_.push({fl.start + fl.transfer, seq_++, TimerKind::flight_done, fid, fl.generation});
      out_.closed_form_phases++;
      return;
    }
    // Contention: flights running in closed form on these links join SimGrid with what they have left.
    for (int ld : fl.link_dirs)
      if (alone_owner_[ld] >= 0) to_simgrid(alone_owner_[ld]);
    start_simgrid(fid, 1.0);
  }

  void to_simgrid(int fid) {
    Flight& fl = flights_[fid];
    for (int ld : fl.link_dirs)
      if (alone_owner_[ld] == fid) alone_owner_[ld] = -1;
    fl.generation++;  // its timer no longer lands it
    double left = std::max(0.0, 1.0 - (sg4::Engine::get_clock() - fl.start) / fl.transfer);
    if (left <= 1e-12) {  // done this very instant
      timers_.push({sg4::Engine::get_clock(), seq_++, TimerKind::flight_done, fid, fl.generation});
      return;
    }
    out_.handed_over_phases++;
    start_simgrid(fid, left);
  }

  // The flight's flows, scaled to the share of bytes still to move, as one SimGrid parallel task.
  void start_simgrid(int fid, double share) {
    const Flight& fl = flights_[fid];
    const int p = graph_.tasks[fl.task].plan;
    const auto& phase = graph_.plans[p][fl.phase];
    if (sg4::ExecPtr exec{options_.sparse_handoff ? sparse_.start(fid, p, fl.phase, share) : nullptr,
                          false}) {
      running_.push_back(exec);
      running_flight_.push_back(fid);
      out_.simgrid_activities++;
      return;
    }
    hosts_.clear();
    index_.clear();
    for (const auto& f : phase.flows) {  // hosts by topology vertex: a flow may end at a switch
      if (plan::moves_nothing(f)) continue;
      for (int v : {plan::source_vertex(topo_, f), plan::target_vertex(topo_, f)})
        if (index_.emplace(v, static_cast<int>(hosts_.size())).second)
          hosts_.push_back(platform_.vertex_host[v]);
    }
    const size_t n = hosts_.size();
    std::vector<double> bytes(n * n, 0.0), flops(n, 0.0);
    for (const auto& f : phase.flows) {
      if (plan::moves_nothing(f)) continue;
      bytes[index_[plan::source_vertex(topo_, f)] * n + index_[plan::target_vertex(topo_, f)]] +=
          f.bytes * share;
    }
    sg4::ExecPtr exec =
        sg4::Exec::init()->set_hosts(hosts_)->set_flops_amounts(flops)->set_bytes_amounts(bytes);
    exec->start();
    running_.push_back(exec);
    running_flight_.push_back(fid);
    out_.simgrid_activities++;
  }

  // A flight has moved all its bytes: free its links, continue its task.
  void land(int fid) {
    Flight& fl = flights_[fid];
    for (int ld : fl.link_dirs) {
      users_[ld]--;
      if (alone_owner_[ld] == fid) alone_owner_[ld] = -1;
    }
    int task = fl.task, phase = fl.phase;
    sparse_.release(fid);
    fl.generation++;
    fl.link_dirs.clear();
    free_flights_.push_back(fid);
    next_phase(task, phase + 1);
  }

  int new_flight() {
    if (!free_flights_.empty()) {
      int fid = free_flights_.back();
      free_flights_.pop_back();
      return fid;
    }
    flights_.emplace_back();
    return static_cast<int>(flights_.size()) - 1;
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

  const topology::Topology& topo_;
  const TaskGraph& graph_;
  const Platform& platform_;
  ReplayResult& out_;
  ReplayOptions options_;
  std::vector<int> waiting_;
  std::vector<std::vector<int>> successors_;
  std::deque<int> ready_;
  std::priority_queue<Timer> timers_;
  long long seq_ = 0;
  std::vector<Flight> flights_;
  std::vector<int> free_flights_;
  std::vector<int> users_;        // per link direction: flights using it
  std::vector<int> alone_owner_;  // per link direction: the closed-form flight on it, or -1
  PhaseLoadCache loads_;          // the closed-form cost of each phase, computed once
  std::vector<sg4::ActivityPtr> running_;
  std::vector<int> running_flight_;
  std::vector<sg4::Host*> hosts_;
  std::unordered_map<int, int> index_;
  SparseHandoff sparse_;  // the phase matrix without its n x n zeros
  size_t done_ = 0;
};

}  // namespace

ReplayOptions default_replay_options() {
  ReplayOptions o;
  const char* env = std::getenv("PODSIM_ALWAYS_SIMGRID");
  if (env && std::string(env) == "1") o.closed_form_when_alone = false;
  const char* dense = std::getenv("PODSIM_DENSE_HANDOFF");
  if (dense && std::string(dense) == "1") o.sparse_handoff = false;
  return o;
}

namespace {

ReplayResult replay_on_this_stack(const topology::Topology& topo, const TaskGraph& graph,
                                  const ReplayOptions& options, const PlatformUse& use, size_t stack_bytes) {
  int argc = 1;
  char name[] = "podsim";
  char* argv[] = {name, nullptr};
  sg4::Engine engine(&argc, argv);
  // The engine installs a SIGINT handler that calls exit(), which tears SimGrid down under this replay
  // while it runs (under the sanitizers the crash report then deadlocks with the leak check, and the
  // orphaned process keeps its parent's output open). The replay runs in a child process whose parent
  // handles interrupts (a sweep keeps what finished): the child just dies.
  std::signal(SIGINT, SIG_DFL);
  xbt_log_control_set("root.thresh:warning");
  engine.set_config("host/model:ptask_L07");
  engine.set_config("network/crosstraffic:0");
  // The replay actor gets as much stack as the engine thread (SimGrid's default is 8 MiB), in KiB.
  engine.set_config(fmt::format("contexts/stack-size:{}", stack_bytes / 1024));
  ReplayResult result;
  Platform platform = build_platform(topo, use);
  result.hosts = platform.hosts;
  result.links = platform.links;
  std::string error;
  sg4::Actor::create("replay", platform.driver, [&] {
    try {
      Replayer(topo, graph, platform, result, options).run();
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
  engine.run();
  if (!error.empty()) throw std::runtime_error(error);
  return result;
}

struct EngineThread {
  const topology::Topology& topo;
  const TaskGraph& graph;
  const ReplayOptions& options;
  const PlatformUse& use;
  size_t stack_bytes;
  ReplayResult result;
  std::exception_ptr error;
};

void* run_engine_thread(void* arg) {
  auto* job = static_cast<EngineThread*>(arg);
  try {
    job->result = replay_on_this_stack(job->topo, job->graph, job->options, job->use, job->stack_bytes);
  } catch (...) {
    job->error = std::current_exception();
  }
  return nullptr;
}

}  // namespace

ReplayResult replay_in_process(const topology::Topology& topo, const TaskGraph& graph,
                               const ReplayOptions& options) {
  // SimGrid 3.32's selective update (System::update_modified_cnst_set_rec) recurses once per constraint of
  // the connected component it walks, in the maestro, i.e. on the thread that runs the engine. A large
  // fabric makes that component deep: 16,384 DGX nodes overflowed the default 8 MiB stack (issue 11). So
  // the engine runs on a thread whose stack is sized from the platform, whatever `ulimit -s` says; only the
  // pages the walk touches are ever committed.
  PlatformUse use = platform_use(topo, graph);
  use.spare_hosts = options.sparse_handoff ? spare_hosts_for(use.hosts) : 0;
  EngineThread job{
      topo, graph,  options, use, simgrid_stack_bytes(use.hosts + use.spare_hosts, use.link_dirs),
      {},   nullptr};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  int rc = pthread_attr_setstacksize(&attr, job.stack_bytes);
  pthread_t thread;
  if (rc == 0) rc = pthread_create(&thread, &attr, run_engine_thread, &job);
  pthread_attr_destroy(&attr);
  if (rc != 0)
    throw std::runtime_error(fmt::format("cannot start the simulation thread with a {:.0f} MiB stack: {}",
                                         job.stack_bytes / 1048576.0, std::strerror(rc)));
  pthread_join(thread, nullptr);
  if (job.error) std::rethrow_exception(job.error);
  return std::move(job.result);
}

ReplayResult replay(const topology::Topology& topo, const TaskGraph& graph, const ReplayOptions& options) {
  if (!options.sparse_handoff) check_replayable(topo, graph);
  ChildOutcome child = run_in_child([&] {
    try {
      return encode_result(replay_in_process(topo, graph, options));
    } catch (const std::exception& e) {
      return encode_error(e.what());
    }
  });
  if (!child.complete) {
    if (child.signal != 0)
      throw std::runtime_error(fmt::format("simulation process died with signal {}", child.signal));
    throw std::runtime_error("simulation process ended without a result");
  }
  return decode_result(child.bytes);
}

}  // namespace podsim::engine
