// Branch and bound over the plan candidates (plan_search.hpp).
#include "podsim/driver/plan_search.hpp"

#include <fmt/format.h>
#include <poll.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <sstream>
#include <stdexcept>

#include "podsim/core/error.hpp"
#include "podsim/core/subprocess.hpp"
#include "podsim/engine/replay.hpp"
#include "podsim/report/invariants.hpp"
#include "podsim/report/run_result.hpp"
#include "podsim/workload/transformer/megatron_builder.hpp"

namespace podsim::driver {
namespace {

// At most `n` bytes of `text`, not cut inside a UTF-8 sequence (the journal and shard files are JSON).
std::string prefix(const std::string& text, size_t n) {
  if (text.size() <= n) return text;
  // text[n] is the first byte left out: while it continues a sequence, leave that sequence out too.
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return text.substr(0, n);
}

// A worker's report: one line of numbers, then the description (the pipe holds far more than this).
std::string serialize(const SimOutcome& s) {
  std::string out = fmt::format("{}\t{:.17g}\t{:.17g}\t{:.17g}\t{:.17g}\t{:.17g}", s.status, s.step_time,
                                s.tokens_per_s, s.mfu, s.memory, s.bubble);
  for (double b : s.breakdown) out += fmt::format("\t{:.17g}", b);
  std::string detail = prefix(s.detail, 2000), description = prefix(s.description, 1000);
  std::replace(detail.begin(), detail.end(), '\n', ' ');
  std::string hints;  // one line, the hints separated by the ASCII unit separator
  for (const auto& h : s.hints) hints += (hints.empty() ? "" : "\x1f") + prefix(h, 1000);
  std::replace(hints.begin(), hints.end(), '\n', ' ');
  return out + "\n" + description + "\n" + detail + "\n" + hints + "\n";
}

SimOutcome deserialize(const std::string& text) {
  SimOutcome s;
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line)) return {.status = "failed", .detail = "the worker sent nothing"};
  std::istringstream fields(line);
  std::getline(fields, s.status, '\t');
  fields >> s.step_time >> s.tokens_per_s >> s.mfu >> s.memory >> s.bubble;
  for (double& b : s.breakdown) fields >> b;
  std::getline(in, s.description);
  std::getline(in, s.detail);
  std::string hints, hint;
  std::getline(in, hints);
  std::istringstream each(hints);
  while (std::getline(each, hint, '\x1f'))
    if (!hint.empty()) s.hints.push_back(hint);
  return s;
}

// The candidates in flight, one worker process each (core/subprocess: the fork and pipe that `podsim run`'s
// SimGrid isolation uses, started without waiting so that `jobs` of them run at once).
class Pool {
 public:
  ~Pool() {
    for (const auto& [row, child] : running_) finish_child(child);
  }
  void start(size_t row, const std::function<std::string()>& work) {
    running_.emplace_back(row, start_child(work));
  }
  size_t size() const { return running_.size(); }
  // Waits until one worker has sent its result (or died): its row and outcome.
  std::pair<size_t, SimOutcome> wait_one() {
    std::vector<pollfd> fds;
    for (const auto& [row, child] : running_) fds.push_back({child.fd, POLLIN, 0});
    while (::poll(fds.data(), fds.size(), -1) < 0)
      if (errno != EINTR) throw std::runtime_error(fmt::format("poll failed: {}", std::strerror(errno)));
    size_t i = 0;
    while (i + 1 < fds.size() && fds[i].revents == 0) ++i;
    auto [row, child] = running_[i];
    running_.erase(running_.begin() + static_cast<long>(i));
    ChildOutcome out = finish_child(child);
    if (!out.complete)
      return {row,
              {.status = "failed",
               .detail = out.signal ? fmt::format("the worker process died of signal {} ({})", out.signal,
                                                  ::strsignal(out.signal))
                                    : "the worker process ended without a result"}};
    return {row, deserialize(out.bytes)};
  }

 private:
  std::vector<std::pair<size_t, StartedChild>> running_;
};

// A candidate's group: its values of the distinct keys.
std::vector<long long> group_of(const CandidateValues& values, const std::vector<size_t>& keys) {
  std::vector<long long> g;
  for (size_t k : keys) g.push_back(values[k]);
  return g;
}

// The k-th best group's best simulated step time so far (infinite until k groups are known). A group is
// the candidates alike in the distinct keys; without --distinct every candidate is its own.
class Best {
 public:
  Best(int k, std::vector<size_t> keys) : k_(static_cast<size_t>(std::max(1, k))), keys_(std::move(keys)) {}
  void add(const CandidateValues& values, double t) {
    auto [it, fresh] = group_best_.try_emplace(group_of(values, keys_), t);
    if (!fresh) {
      if (t >= it->second) return;
      times_.erase(times_.find(it->second));
      it->second = t;
    }
    times_.insert(t);
  }
  double kth() const {
    return times_.size() < k_ ? std::numeric_limits<double>::infinity() : *std::next(times_.begin(), k_ - 1);
  }
  double best() const { return times_.empty() ? 0 : *times_.begin(); }

 private:
  size_t k_;
  std::vector<size_t> keys_;
  std::map<std::vector<long long>, double> group_best_;
  std::multiset<double> times_;  // one per group: its best
};

// Rows in place in the order `order` gives (row i takes the one at order[i]), following each cycle of the
// permutation: no second copy of the rows.
void permute(std::vector<PlanRow>& rows, std::vector<std::uint32_t>& order) {
  constexpr auto kPlaced = std::numeric_limits<std::uint32_t>::max();
  for (size_t i = 0; i < rows.size(); ++i) {
    if (order[i] == kPlaced) continue;
    PlanRow first = std::move(rows[i]);
    size_t j = i;
    for (size_t k = order[j]; k != i; k = order[j]) {
      rows[j] = std::move(rows[k]);
      order[j] = kPlaced;
      j = k;
    }
    rows[j] = std::move(first);
    order[j] = kPlaced;
  }
}

// std::stable_sort's order by `before`, through an index: ties broken by position.
template <class Before>
void stable_order(std::vector<PlanRow>& rows, Before before) {
  if (rows.size() >= std::numeric_limits<std::uint32_t>::max())
    throw InputError(fmt::format(
        "plan: {} candidates fit, more than one search can rank; fix some keys with --set", rows.size()));
  std::vector<std::uint32_t> order(rows.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (before(rows[a], rows[b])) return true;
    if (before(rows[b], rows[a])) return false;
    return a < b;
  });
  permute(rows, order);
}

// Every candidate that fits, in lower-bound order (ties in enumeration order).
std::vector<PlanRow> fitting_candidates(Estimator& estimator, const Space& space, PlanResult& result) {
  std::vector<PlanRow> rows;
  result.enumerated = enumerate(
      space,
      [&](const workload::WorkloadConfig& w, const CandidateValues& values) {
        PlanRow row{values, estimator.estimate(w)};
        if (!row.estimate.fits)
          result.skipped["out of memory (closed-form memory model)"]++;
        else
          rows.push_back(std::move(row));
      },
      result.skipped);
  order_by_lower_bound(rows);
  return rows;
}

}  // namespace

std::vector<size_t> distinct_key_indices(const Space& space, const std::vector<std::string>& names) {
  auto short_name = [](const KeyChoice& k) {
    std::string path = k.key->path;
    return path.substr(path.find('.') + 1);
  };
  std::vector<std::string> wanted;
  for (const auto& n : names)
    if (n == "layout")
      wanted.insert(wanted.end(), kLayoutKeys.begin(), kLayoutKeys.end());
    else
      wanted.push_back(n);
  std::vector<size_t> out;
  for (size_t i = 0; i < space.keys.size(); ++i)
    if (names.empty() || std::find(wanted.begin(), wanted.end(), short_name(space.keys[i])) != wanted.end())
      out.push_back(i);
  for (const auto& n : wanted) {
    bool known = std::any_of(space.keys.begin(), space.keys.end(),
                             [&](const KeyChoice& k) { return short_name(k) == n; });
    if (!known) {
      std::string valid = "layout";
      for (const auto& k : space.keys) valid += ", " + short_name(k);
      throw InputError(fmt::format(
          "--distinct {}: not a searchable key; expected a comma-separated list of {}", n, valid));
    }
  }
  return out;
}

std::vector<size_t> PlanResult::group_bests() const {
  std::set<std::vector<long long>> seen;
  std::vector<size_t> out;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].sim().ok()) break;  // ranked rows come first
    if (seen.insert(group_of(rows[i].values, distinct)).second) out.push_back(i);
  }
  return out;
}

int PlanResult::ranked() const {
  return static_cast<int>(
      std::count_if(rows.begin(), rows.end(), [](const PlanRow& r) { return r.sim().ok(); }));
}

SimOutcome simulate_candidate(const topology::Topology& topo, const workload::WorkloadConfig& w) {
  SimOutcome s;
  try {
    report::RunResult r;
    r.device_memory_capacity = topo.device.hbm_bytes;
    r.topology_devices = topo.compute_device_count();
    r.plan = workload::build_megatron_step(topo, w, w.training.micro_batch, w.parallel.virtual_stages);
    r.replay = engine::replay(topo, r.plan.graph);
    r.stages = report::stage_breakdown(r.plan.graph, r.replay);
    r.mean = report::mean_breakdown(r.stages);
    report::check_invariants(r, topo);
    s.status = "ok";
    s.step_time = r.step_time();
    s.tokens_per_s = r.tokens_per_s();
    s.mfu = r.mfu();
    s.memory = r.memory_per_device();
    s.breakdown = r.mean.seconds;
    s.bubble = r.mean.idle;
    s.description = r.plan.description;
    s.hints = r.plan.hints;
  } catch (const InfeasibleConfig& e) {
    s.status = e.status();
    s.detail = e.what();
  } catch (const std::exception& e) {
    s.status = "failed";
    s.detail = e.what();
  }
  return s;
}

std::string bound_by(const SimOutcome& s) {
  if (!s.ok() || s.step_time <= 0) return "";
  std::string name = "bubble";
  double most = s.bubble;
  for (int c = 0; c < workload::kCategories; ++c)
    if (static_cast<workload::Category>(c) != workload::Category::compute && s.breakdown[c] > most)
      most = s.breakdown[c], name = workload::to_string(static_cast<workload::Category>(c));
  double compute = s.breakdown[static_cast<int>(workload::Category::compute)];
  return fmt::format("compute {:.0f}%, then {} {:.0f}%", 100 * compute / s.step_time, name,
                     100 * most / s.step_time);
}

const SimOutcome& PlanRow::sim() const {
  static const SimOutcome none;
  return outcome ? *outcome : none;
}

void order_by_lower_bound(std::vector<PlanRow>& rows) {
  stable_order(rows, [](const PlanRow& a, const PlanRow& b) {
    return a.estimate.lower_bound < b.estimate.lower_bound;
  });
}

void rank_rows(std::vector<PlanRow>& rows) {
  stable_order(rows, [](const PlanRow& a, const PlanRow& b) {
    bool ra = a.sim().ok(), rb = b.sim().ok();
    if (ra != rb) return ra;
    return ra ? a.sim().step_time < b.sim().step_time : a.estimate.lower_bound < b.estimate.lower_bound;
  });
}

PlanResult run_plan(const topology::Topology& topo, const Space& space, const PlanOptions& options) {
  auto started = std::chrono::steady_clock::now();
  PlanResult result;
  result.distinct = distinct_key_indices(space, options.distinct);
  Estimator estimator(topo);
  result.rows = fitting_candidates(estimator, space, result);
  if (options.shards > 1) {  // this shard's rows: every shards-th in lower-bound order
    std::vector<PlanRow> mine;
    for (size_t i = static_cast<size_t>(options.shard); i < result.rows.size();
         i += static_cast<size_t>(options.shards))
      mine.push_back(std::move(result.rows[i]));
    result.rows = std::move(mine);
  }
  if (options.progress)
    options.progress(
        fmt::format("{} candidates divide, {} fit; simulating in lower-bound order with {} "
                    "worker(s)",
                    result.enumerated, result.rows.size(), options.jobs));
  Best best(options.top, result.distinct);
  Pool pool;
  size_t next = 0;
  auto record = [&](size_t row, SimOutcome sim, bool recalled) {
    PlanRow& r = result.rows[row];
    if (!recalled && options.on_simulated) options.on_simulated(candidate_label(space, r.values), sim);
    r.set_sim(std::move(sim));
    result.simulated++;
    result.recalled += recalled ? 1 : 0;
    if (r.sim().ok()) best.add(r.values, r.sim().step_time);
    if (options.progress)
      options.progress(
          // Queued: the candidates not yet taken up, in lower-bound order; 0 once the bound rules out the
          // rest.
          fmt::format("[{} simulated, {} queued] {}: {}{} (bound {:.4g} s), best {:.4g} s", result.simulated,
                      result.rows.size() - next, candidate_label(space, r.values),
                      r.sim().ok() ? fmt::format("{:.4g} s", r.sim().step_time) : r.sim().status,
                      recalled ? ", recalled" : "", r.estimate.lower_bound, best.best()));
  };
  while (next < result.rows.size() || pool.size() > 0) {
    while (next < result.rows.size() && pool.size() < static_cast<size_t>(std::max(1, options.jobs))) {
      // Rows are in lower-bound order: once one cannot beat the k-th best, none after it can.
      if (!options.exhaustive && result.rows[next].estimate.lower_bound >= best.kth()) {
        next = result.rows.size();
        break;
      }
      // The refined bound (the whole step's fabric load) may rule this one out alone.
      workload::WorkloadConfig w = resolve(space, result.rows[next].values);
      estimator.refine(w, result.rows[next].estimate);
      if (!options.exhaustive && result.rows[next].estimate.lower_bound >= best.kth()) {
        ++next;
        continue;
      }
      // Simulated before the search was interrupted: its outcome, as the journal has it.
      if (options.recall) {
        if (const SimOutcome* known = options.recall(candidate_label(space, result.rows[next].values))) {
          record(next++, *known, true);
          continue;
        }
      }
      pool.start(next++, [&topo, w] { return serialize(simulate_candidate(topo, w)); });
    }
    if (pool.size() == 0) break;
    auto [row, sim] = pool.wait_one();
    record(row, std::move(sim), false);
  }
  rank_rows(result.rows);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace podsim::driver
