// The ranked table, plan.csv and the HTML report of `podsim plan` (plan_output.hpp).
#include "podsim/driver/plan_output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <sstream>

#include "podsim/core/atomic_write.hpp"
#include "podsim/core/csv_writer.hpp"
#include "podsim/core/units.hpp"
#include "podsim/report/plan_html.hpp"

namespace podsim::driver {
namespace {

std::string key_name(const SearchKey& k) {
  std::string path = k.path;
  return path.substr(path.find('.') + 1);
}

std::string seconds(double s) {
  return fmt::format("{:.6g}", s);
}

// "tp=4 pp=1 ..." for the searched keys among `keys` (indices in space.keys).
std::string label(const Space& space, const CandidateValues& values, const std::vector<bool>& keys) {
  std::string out;
  for (size_t i = 0; i < space.keys.size(); ++i)
    if (space.keys[i].searched && keys[i])
      out += fmt::format("{}{}={}", out.empty() ? "" : " ", key_name(*space.keys[i].key),
                         space.keys[i].key->label(values[i]));
  return out;
}

// Per key: whether its value differs among `rows` (true for every key when fewer than two rows).
std::vector<bool> varying_keys(const Space& space, const PlanResult& result,
                               const std::vector<size_t>& rows) {
  std::vector<bool> varies(space.keys.size(), rows.size() < 2);
  for (size_t k = 0; k < space.keys.size(); ++k)
    for (size_t r : rows)
      if (result.rows[r].values[k] != result.rows[rows.front()].values[k]) varies[k] = true;
  return varies;
}

std::string names_of(const Space& space, const std::vector<size_t>& keys) {
  std::string out;
  for (size_t k : keys) out += (out.empty() ? "" : ", ") + key_name(*space.keys[k].key);
  return out;
}

}  // namespace

std::vector<std::string> plan_csv_columns(const Space& space) {
  std::vector<std::string> c = {"rank"};
  for (const auto& k : space.keys) c.push_back(key_name(*k.key));
  c.insert(c.end(), {"schedule", "status", "lower_bound_s", "step_time_s", "tokens_per_s", "mfu_percent",
                     "memory_GiB", "bound_by"});
  for (int i = 0; i < workload::kCategories; ++i)
    c.push_back(fmt::format("{}_s", workload::to_string(static_cast<workload::Category>(i))));
  c.push_back("bubble_s");
  c.push_back("distinct_rank");  // the rank of the best candidate of each distinct group (plan --distinct)
  return c;
}

namespace {

// plan.csv's rows one at a time (a search may keep a million candidates: their cells all at once took
// gigabytes), `ranked_only`: the candidates simulated successfully, which come first.
void for_each_plan_csv_row(const Space& space, const PlanResult& result, bool ranked_only,
                           const std::function<void(std::vector<std::string>&&)>& visit) {
  std::vector<size_t> distinct_rank(result.rows.size(), 0);  // 0: not the best of its group
  std::vector<size_t> bests = result.group_bests();
  for (size_t i = 0; i < bests.size(); ++i) distinct_rank[bests[i]] = i + 1;
  int rank = 0;
  for (size_t index = 0; index < result.rows.size(); ++index) {
    const PlanRow& r = result.rows[index];
    bool ok = r.sim().ok();
    if (ranked_only && !ok) break;  // rank_rows put them first
    workload::WorkloadConfig w = resolve(space, r.values);
    std::vector<std::string> row = {ok ? std::to_string(++rank) : ""};
    for (size_t i = 0; i < space.keys.size(); ++i) {
      const auto& k = *space.keys[i].key;
      // Keys not searched keep the file's value: read it back from the resolved workload.
      row.push_back(space.keys[i].searched ? k.label(r.values[i]) : "(as written)");
    }
    row.push_back(w.parallel.pp == 1 ? "none" : workload::to_string(w.parallel.schedule));
    row.push_back(r.simulated() ? r.sim().status : "not simulated (bound)");
    row.push_back(seconds(r.estimate.lower_bound));
    row.push_back(ok ? seconds(r.sim().step_time) : "");
    row.push_back(ok ? fmt::format("{:.6g}", r.sim().tokens_per_s) : "");
    row.push_back(ok ? fmt::format("{:.4g}", 100 * r.sim().mfu) : "");
    row.push_back(fmt::format("{:.4g}", (ok ? r.sim().memory : r.estimate.memory_bytes) / GiB));
    row.push_back(ok ? bound_by(r.sim()) : "");
    for (double b : r.sim().breakdown) row.push_back(ok ? seconds(b) : "");
    row.push_back(ok ? seconds(r.sim().bubble) : "");
    row.push_back(distinct_rank[index] ? std::to_string(distinct_rank[index]) : "");
    visit(std::move(row));
  }
}

}  // namespace

void write_plan_csv(std::ostream& out, const Space& space, const PlanResult& result) {
  out << csv_record(plan_csv_columns(space));
  for_each_plan_csv_row(space, result, false,
                        [&](std::vector<std::string>&& row) { out << csv_record(row); });
}

std::string plan_csv(const Space& space, const PlanResult& result) {
  std::ostringstream out;
  write_plan_csv(out, space, result);
  return out.str();
}

std::string explain_winner(const PlanResult& result) {
  std::vector<size_t> bests = result.group_bests();
  if (bests.size() < 2) {
    if (bests.empty()) return "";
    return result.ranked() == 1 ? "only one candidate was simulated"
                                : "only one distinct candidate was simulated";
  }
  const SimOutcome &a = result.rows[bests[0]].sim(), &b = result.rows[bests[1]].sim();
  // -1 = the pipeline bubble (idle time), else a Category.
  auto cost = [](const SimOutcome& s, int c) { return c < 0 ? s.bubble : s.breakdown[c]; };
  int most = -1;
  for (int c = 0; c < workload::kCategories; ++c)
    if (std::abs(cost(b, c) - cost(a, c)) > std::abs(cost(b, most) - cost(a, most))) most = c;
  std::string name = most < 0 ? "bubble" : workload::to_string(static_cast<workload::Category>(most));
  return fmt::format(
      "the winner is {:.4g} s ({:.2f}%) faster per step than the runner-up; the cost that differs most is "
      "{}: "
      "{:.4g} s in the runner-up, {:.4g} s in the winner",
      b.step_time - a.step_time, 100 * (b.step_time - a.step_time) / b.step_time, name, cost(b, most),
      cost(a, most));
}

void print_plan(std::FILE* out, const Space& space, const PlanResult& result, int top) {
  for (const auto& w : space.base.warnings) fmt::print(out, "warning: {}\n", w);
  std::vector<size_t> shown = result.group_bests();
  if (shown.size() > static_cast<size_t>(top)) shown.resize(static_cast<size_t>(top));
  // The table names only the keys that differ among its rows; the others once above it.
  std::vector<bool> varies = varying_keys(space, result, shown);
  std::vector<bool> same(varies.size());
  for (size_t k = 0; k < varies.size(); ++k) same[k] = !varies[k];
  if (shown.size() > 1) {
    std::string common = label(space, result.rows[shown.front()].values, same);
    if (!common.empty()) fmt::print(out, "same in every row: {}\n", common);
  }
  bool grouped = result.distinct.size() < space.keys.size();
  if (grouped && !shown.empty())
    fmt::print(out, "the best of each distinct {} (the other candidates of each: plan.csv)\n",
               names_of(space, result.distinct));
  size_t width = 7;  // "setting"
  for (size_t i : shown) width = std::max(width, label(space, result.rows[i].values, varies).size());
  fmt::print(out, "{:>4} {:<{}} {:>10} {:>12} {:>6} {:>8}  {}\n", "rank", "setting", width, "step [s]",
             "tokens/s", "MFU %", "mem GiB", "bound by");
  int rank = 0;
  for (size_t i : shown) {
    const PlanRow& r = result.rows[i];
    fmt::print(out, "{:>4} {:<{}} {:>10.5g} {:>12.5g} {:>6.2f} {:>8.1f}  {}\n", ++rank,
               label(space, r.values, varies), width, r.sim().step_time, r.sim().tokens_per_s,
               100 * r.sim().mfu, r.sim().memory / GiB, bound_by(r.sim()));
  }
  if (!shown.empty()) {
    fmt::print(out, "winner: {}\n", result.rows[0].sim().description);
    for (const auto& h : result.rows[0].sim().hints) fmt::print(out, "hint: {}\n", h);
    if (!grouped) {
      // Rows that are the winner's layout with another setting beside it crowd out other layouts.
      std::vector<size_t> layout = distinct_key_indices(space, {"layout"});
      auto same_layout = [&](size_t i) {
        return std::all_of(layout.begin(), layout.end(), [&](size_t k) {
          return result.rows[i].values[k] == result.rows[shown.front()].values[k];
        });
      };
      long long alike = std::count_if(shown.begin() + 1, shown.end(), same_layout);
      if (alike > 0)
        fmt::print(out,
                   "hint: {} of the {} rows below the winner are its layout with other settings; "
                   "--distinct layout ranks the best distinct layouts\n",
                   alike, shown.size() - 1);
    }
  }
  if (std::string why = explain_winner(result); !why.empty()) fmt::print(out, "{}\n", why);
  long long skipped = 0;
  for (const auto& [reason, n] : result.skipped) skipped += n;
  fmt::print(
      out,
      "searched: {} combinations divide and {} fit; {} simulated{} ({} not, their lower bound could not "
      "beat the best {}{}) in {:.1f} s; {} skipped:\n",
      result.enumerated, result.rows.size(), result.simulated,
      result.recalled > 0 ? fmt::format(", {} of them before the search was interrupted", result.recalled)
                          : "",
      static_cast<long long>(result.rows.size()) - result.simulated, top,
      grouped ? " distinct " + names_of(space, result.distinct) : "", result.seconds, skipped);
  for (const auto& [reason, n] : result.skipped) fmt::print(out, "  {:>9}  {}\n", n, reason);
  int failed = 0;
  for (const auto& r : result.rows)
    if (r.simulated() && !r.sim().ok()) failed++;
  if (failed) fmt::print(out, "  {} simulated candidates did not run (see plan.csv status)\n", failed);
}

std::vector<std::string> write_plan_files(const std::string& dir, const std::string& title,
                                          const Space& space, const PlanResult& result) {
  std::filesystem::create_directories(dir);
  std::string csv = dir + "/plan.csv", html = dir + "/plan.html";
  podsim::atomic_write(csv, [&](std::ostream& out) { write_plan_csv(out, space, result); });
  // The report shows the simulated candidates (their memory and tokens/s are its points).
  report::PlanReport rep{title, plan_csv_columns(space), {}, explain_winner(result)};
  for_each_plan_csv_row(space, result, true,
                        [&](std::vector<std::string>&& row) { rep.rows.push_back(std::move(row)); });
  podsim::atomic_write(html, report::plan_report_html(rep));
  return {csv, html};
}

}  // namespace podsim::driver
