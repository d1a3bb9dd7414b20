// podsim plan (driver/plan*.hpp): the search space respects fixed keys and divisibility, the branch and
// bound finds exactly what exhaustive simulation finds, and bad input is a clear InputError.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "podsim/core/config_node.hpp"
#include "podsim/driver/plan.hpp"
#include "podsim/driver/plan_bound.hpp"
#include "podsim/driver/plan_output.hpp"
#include "test_helpers.hpp"

namespace podsim {
namespace {

using driver::Space;
using testing::error_of;
using testing::preset;
using testing::source_path;

const std::string kLlama8b = source_path("workloads/llama3-8b.yaml");

// The search space of workload `file` on `topo`, its keys overridden by `sets`, the `fixed` keys not
// searched.
Space workload_space(const topology::Topology& topo, const std::string& file, const Overrides& sets,
                     const std::vector<std::string>& fixed) {
  ConfigNode root = ConfigNode::load_file(file);
  for (const auto& [k, v] : sets) root.apply_override(k, v, "test");
  return driver::read_space(root, file, topo, true, fixed);
}

// Llama 3 8B on two DGX H100 (16 GPUs), the workload's keys overridden by `sets`.
Space llama_space(const topology::Topology& topo, const Overrides& sets,
                  const std::vector<std::string>& fixed) {
  return workload_space(topo, kLlama8b, sets, fixed);
}

// What print_plan writes for the `top` best of `result`.
std::string printed_plan(const Space& space, const driver::PlanResult& result, int top) {
  char* text = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  driver::print_plan(out, space, result, top);
  std::fclose(out);
  std::string printed(text, size);
  std::free(text);
  return printed;
}

size_t key_index(const Space& s, const std::string& path) {
  for (size_t i = 0; i < s.keys.size(); ++i)
    if (path == s.keys[i].key->path) return i;
  ADD_FAILURE() << path;
  return 0;
}

TEST(Plan, EnumerationKeepsFixedKeysAndDivides) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "2"}});
  Space s = llama_space(topo, {{"parallel.tp", "2"}}, {"parallel.tp"});
  EXPECT_FALSE(s.keys[key_index(s, "parallel.tp")].searched);
  EXPECT_TRUE(s.keys[key_index(s, "parallel.pp")].searched);
  driver::SkipCounts skipped;
  std::set<int> pps, zero3_pps;
  long long n = driver::enumerate(
      s,
      [&](const workload::WorkloadConfig& w, const driver::CandidateValues&) {
        EXPECT_EQ(w.parallel.tp, 2);
        EXPECT_EQ(w.model.layers % (w.parallel.pp * w.parallel.virtual_stages), 0);
        EXPECT_EQ(w.parallel.tp * w.parallel.cp * w.parallel.pp * w.parallel.dp, 16);  // dp from the devices
        EXPECT_EQ(w.training.global_batch % (w.parallel.dp * w.training.micro_batch), 0);
        EXPECT_FALSE(w.parallel.sequence_parallel && w.parallel.tp == 1);
        pps.insert(w.parallel.pp);
        if (w.parallel.zero == 3) zero3_pps.insert(w.parallel.pp);
      },
      skipped);
  EXPECT_GT(n, 100);
  EXPECT_EQ(pps, (std::set<int>{1, 2, 4, 8}));  // divisors of 32 layers with tp 2 on 16 GPUs
  // ZeRO-3 (FSDP) beside the pipelines that leave data-parallel ranks (pp 8 x tp 2 leaves one).
  EXPECT_EQ(zero3_pps, (std::set<int>{1, 2, 4}));
}

TEST(Plan, ListSearchesOnlyItsValuesAndScalarsStayWithAsWritten) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "2"}});
  ConfigNode root = ConfigNode::load_file(kLlama8b);
  root.apply_override("parallel.pp", "[2, 4]", "test");
  root.apply_override("parallel.dp", "auto", "test");
  Space s = driver::read_space(root, kLlama8b, topo, false, {});
  driver::SkipCounts skipped;
  std::set<int> pps, tps;
  driver::enumerate(
      s,
      [&](const workload::WorkloadConfig& w, const driver::CandidateValues&) {
        pps.insert(w.parallel.pp);
        tps.insert(w.parallel.tp);
        EXPECT_EQ(w.parallel.zero, 3);  // as written
        EXPECT_EQ(w.parallel.tp, 1);
      },
      skipped);
  // ZeRO-3 (as written) runs beside the pipeline depths of the list.
  EXPECT_EQ(pps, (std::set<int>{2, 4}));
  EXPECT_EQ(tps, std::set<int>{1});
  // With ZeRO-1 as written, the list's values run, every other key as the file states it.
  ConfigNode again = ConfigNode::load_file(kLlama8b);  // read_space wrote the neutral values into root
  for (const auto& [k, v] :
       Overrides{{"parallel.pp", "[2, 4]"}, {"parallel.dp", "auto"}, {"parallel.zero", "1"}})
    again.apply_override(k, v, "test");
  Space s1 = driver::read_space(again, kLlama8b, topo, false, {});
  driver::enumerate(
      s1,
      [&](const workload::WorkloadConfig& w, const driver::CandidateValues&) {
        pps.insert(w.parallel.pp);
        tps.insert(w.parallel.tp);
        EXPECT_EQ(w.parallel.dp, 16 / w.parallel.pp);  // dp: auto fills the devices
        EXPECT_EQ(w.training.micro_batch, 1);
      },
      skipped);
  EXPECT_EQ(pps, (std::set<int>{2, 4}));
  EXPECT_EQ(tps, std::set<int>{1});
}

// training.recompute_modules says what `selective` recomputes: a search of training.recompute keeps it for
// the selective candidates (the modules' memory and FLOPs follow) and leaves it unused for none and full,
// rather than refusing the file (DeepSeek-V3's preset states [mla_up_proj, mlp]); a list without core_attn
// stays refused beside context parallelism, candidate by candidate.
TEST(Plan, RecomputeModulesHoldForTheSelectiveCandidates) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "1"}});
  Overrides sets = {{"training.recompute", "[none, selective, full]"},
                    {"training.recompute_modules", "[mlp]"},
                    {"parallel.cp", "[1, 2]"},
                    {"parallel.tp", "1"},
                    {"parallel.pp", "1"},
                    {"parallel.zero", "1"}};
  Space s = workload_space(topo, kLlama8b, sets, {"parallel.tp", "parallel.pp", "parallel.zero"});
  driver::SkipCounts skipped;
  std::map<workload::Recompute, std::set<int>> cps;
  driver::enumerate(
      s,
      [&](const workload::WorkloadConfig& w, const driver::CandidateValues&) {
        cps[w.training.recompute].insert(w.parallel.cp);
        EXPECT_TRUE(w.training.recompute_modules.mlp);
        EXPECT_FALSE(w.training.recompute_modules.core_attn);  // the list replaces the default
      },
      skipped);
  EXPECT_EQ(cps[workload::Recompute::none], (std::set<int>{1, 2}));
  EXPECT_EQ(cps[workload::Recompute::full], (std::set<int>{1, 2}));
  EXPECT_EQ(cps[workload::Recompute::selective], std::set<int>{1});  // no core_attn: cp 2 refused
  long long refused = 0;
  for (const auto& [reason, n] : skipped)
    refused += reason.find("without core_attn") != std::string::npos ? n : 0;
  EXPECT_GT(refused, 0);
  // The preset that states a list: its plan searches recompute instead of stopping at the file.
  auto pod = preset("dgx-h100-superpod", {{"nodes", "128"}});
  EXPECT_NO_THROW(workload_space(pod, source_path("workloads/deepseek-v3.yaml"), {}, {}));
}

// The search ranks its candidates by lower bound, equal bounds in enumeration order (the rows are sorted
// through an index and permuted in place, where a stable sort had needed a second copy of them).
TEST(Plan, CandidatesAreInLowerBoundOrderTiesAsEnumerated) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "1"}});
  Space s = llama_space(topo, {{"training.global_batch", "16"}}, {});
  std::vector<driver::CandidateValues> enumerated;
  driver::SkipCounts skipped;
  driver::enumerate(
      s, [&](const workload::WorkloadConfig&, const driver::CandidateValues& v) { enumerated.push_back(v); },
      skipped);
  driver::PlanOptions none{.top = 1, .jobs = 1, .exhaustive = false, .progress = {}};
  auto r = driver::run_plan(topo, s, none);
  std::vector<const driver::PlanRow*> unsimulated;
  for (const auto& row : r.rows)
    if (!row.simulated()) unsimulated.push_back(&row);
  ASSERT_GT(unsimulated.size(), 100u);
  auto position = [&](const driver::CandidateValues& v) {
    return std::find(enumerated.begin(), enumerated.end(), v) - enumerated.begin();
  };
  size_t ties = 0;
  for (size_t i = 1; i < unsimulated.size(); ++i) {
    const auto &a = *unsimulated[i - 1], &b = *unsimulated[i];
    ASSERT_LE(a.estimate.lower_bound, b.estimate.lower_bound);
    if (a.estimate.lower_bound == b.estimate.lower_bound) {
      ++ties;
      EXPECT_LT(position(a.values), position(b.values));
    }
  }
  EXPECT_GT(ties, 0u);  // the space has equal bounds (e.g. settings the bound does not see)
}

// The search reads its base with each searched key at a neutral value; where a fixed key refuses that value,
// the base takes the key's next one, and the candidates are enumerated as ever. A MoE model with a fixed
// tp > 1 needs sequence parallelism, a fixed cp > 1 beside a sliding window the all-gather variant: both
// stopped at the first value ("a MoE model with tp=2 needs sequence_parallel: true"), about a key the user
// did not set.
TEST(Plan, FixedKeysTakeTheSearchedKeysValuesTheyAccept) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "8"}});
  auto each = [&](const std::string& file, const Overrides& sets, const std::vector<std::string>& fixed,
                  const std::function<void(const workload::WorkloadConfig&)>& check) {
    Space s = workload_space(topo, source_path(file), sets, fixed);
    driver::SkipCounts skipped;
    long long candidates = 0;
    driver::enumerate(
        s,
        [&](const workload::WorkloadConfig& w, const driver::CandidateValues&) {
          ++candidates;
          check(w);
        },
        skipped);
    EXPECT_GT(candidates, 0) << file;
  };
  each("workloads/mixtral-8x7b.yaml", {{"parallel.tp", "2"}}, {"parallel.tp"},
       [](const workload::WorkloadConfig& w) {
         EXPECT_EQ(w.parallel.tp, 2);
         EXPECT_TRUE(w.parallel.sequence_parallel);
       });
  each("workloads/gpt-oss-120b.yaml",
       {{"parallel.cp", "2"}, {"parallel.pp", "4"}, {"parallel.tp", "1"}, {"parallel.ep", "8"}},
       {"parallel.cp", "parallel.pp", "parallel.tp", "parallel.ep"}, [](const workload::WorkloadConfig& w) {
         EXPECT_EQ(w.parallel.cp, 2);
         EXPECT_EQ(w.parallel.cp_algorithm, workload::CpAlgorithm::all_gather);
       });
  // A fixed key no searched value satisfies still stops with the first error.
  std::string e = error_of([&] { workload_space(topo, kLlama8b, {{"parallel.tp", "3"}}, {"parallel.tp"}); });
  EXPECT_NE(e.find("cannot be split over tp=3"), std::string::npos) << e;
}

// A --set that leaves a key of the file unused warns once, above the plan's table (the reader prints
// nothing: WorkloadConfig::warnings).
TEST(Plan, WarningsOfTheWorkloadArePrintedOnce) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "1"}});
  ConfigNode root = ConfigNode::load_file(kLlama8b);
  root.apply_override("training.recompute", "selective", "test");
  root.apply_override("training.recompute_modules", "[mlp]", "test");
  root.apply_override("training.recompute", "full", "--set workload.training.recompute=full");
  root.apply_override("parallel.tp", "1", "--set workload.parallel.tp=1");
  Space s = driver::read_space(root, kLlama8b, topo, true, {"parallel.tp", "training.recompute"});
  ASSERT_EQ(s.base.warnings.size(), 1u);
  driver::PlanResult none;
  std::string printed = printed_plan(s, none, 1);
  EXPECT_EQ(printed.find("warning: "), 0u) << printed;
  EXPECT_NE(printed.find("training.recompute_modules): unused"), std::string::npos) << printed;
}

// dp fills the devices left by tp x cp x pp, or, where that many replicas do not divide the global batch,
// the most that do (the rest idle): 24 GPUs and a batch of 128 run 16 replicas at tp 1, 8 at tp 2 (12 do
// not divide 128 either), 4 at tp 4 (6 do not) and 2 at tp 8 (3 do not); before, none of them was a
// candidate.
TEST(Plan, DataParallelTakesTheMostReplicasThatDivideTheBatch) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "3"}});
  Space s = llama_space(topo,
                        {{"parallel.tp", "[1, 2, 4, 8]"},
                         {"parallel.pp", "1"},
                         {"parallel.cp", "1"},
                         {"parallel.dp", "auto"},
                         {"training.global_batch", "128"}},
                        {"parallel.pp", "parallel.cp"});
  driver::SkipCounts skipped;
  std::map<int, std::set<int>> dps;
  driver::enumerate(
      s,
      [&](const workload::WorkloadConfig& w, const driver::CandidateValues&) {
        dps[w.parallel.tp].insert(w.parallel.dp);
      },
      skipped);
  EXPECT_EQ(dps[1], std::set<int>{16});
  EXPECT_EQ(dps[2], std::set<int>{8});
  EXPECT_EQ(dps[4], std::set<int>{4});
  EXPECT_EQ(dps[8], std::set<int>{2});
  EXPECT_EQ(skipped.count("dp does not divide global_batch"), 0u);
}

// A small space: tp, pp, micro_batch searched, the rest fixed.
Space small_space(const topology::Topology& topo) {
  return llama_space(topo,
                     {{"parallel.tp", "[1, 2, 4]"},
                      {"parallel.pp", "[1, 2, 4]"},
                      {"training.micro_batch", "[1, 2]"},
                      {"training.global_batch", "32"},
                      {"model.seq_len", "4096"},
                      {"parallel.zero", "1"},
                      {"parallel.sequence_parallel", "true"}},
                     {"parallel.cp", "parallel.virtual_stages", "training.recompute",
                      "parallel.sequence_parallel", "parallel.zero", "parallel.shard_group",
                      "parallel.dp_overlap", "parallel.tp_overlap", "parallel.etp", "parallel.ep"});
}

TEST(Plan, BranchAndBoundFindsTheExhaustiveBest) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "2"}});
  Space s = small_space(topo);
  driver::PlanOptions bnb{.top = 2, .jobs = 2, .exhaustive = false, .progress = {}};
  driver::PlanOptions all = bnb;
  all.exhaustive = true;
  auto a = driver::run_plan(topo, s, bnb), b = driver::run_plan(topo, s, all);
  ASSERT_GE(b.ranked(), 4);
  EXPECT_EQ(b.simulated, static_cast<long long>(b.rows.size()));
  EXPECT_LT(a.simulated, b.simulated);  // the bound saved simulations
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(a.rows[i].values, b.rows[i].values) << i;
    EXPECT_DOUBLE_EQ(a.rows[i].sim().step_time, b.rows[i].sim().step_time);
  }
  // The bound is a bound: no simulated step beats it.
  for (const auto& r : b.rows)
    if (r.sim().ok()) {
      EXPECT_LE(r.estimate.lower_bound, r.sim().step_time) << driver::candidate_label(s, r.values);
    }
  std::string csv = driver::plan_csv(s, a);
  EXPECT_NE(csv.find("rank,tp,cp,pp"), std::string::npos);
  EXPECT_NE(csv.find("not simulated (bound)"), std::string::npos);
}

// --distinct: the k best groups (candidates alike in the distinct keys), each at its best candidate, are
// exactly what exhaustive simulation gives; the table then shows one row per group.
TEST(Plan, DistinctGroupsAreTheExhaustiveBestOfEachGroup) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "2"}});
  Space s = small_space(topo);
  driver::PlanOptions all{.top = 1, .jobs = 2, .exhaustive = true, .progress = {}};
  auto every = driver::run_plan(topo, s, all);
  for (const std::vector<std::string>& distinct : {std::vector<std::string>{"tp"}, {"tp", "pp"}}) {
    std::vector<size_t> keys = driver::distinct_key_indices(s, distinct);
    // The exhaustive answer: each group's best step, groups by it.
    std::map<std::vector<long long>, double> best;
    for (const auto& r : every.rows) {
      if (!r.sim().ok()) continue;
      std::vector<long long> g;
      for (size_t k : keys) g.push_back(r.values[k]);
      auto [it, fresh] = best.try_emplace(g, r.sim().step_time);
      if (!fresh) it->second = std::min(it->second, r.sim().step_time);
    }
    std::vector<double> expected;
    for (const auto& [g, t] : best) expected.push_back(t);
    std::sort(expected.begin(), expected.end());
    ASSERT_GE(expected.size(), 3u);
    driver::PlanOptions grouped{
        .top = 2, .jobs = 2, .exhaustive = false, .progress = {}, .distinct = distinct};
    auto r = driver::run_plan(topo, s, grouped);
    std::vector<size_t> bests = r.group_bests();
    ASSERT_GE(bests.size(), 2u);
    for (size_t i = 0; i < 2; ++i) EXPECT_DOUBLE_EQ(r.rows[bests[i]].sim().step_time, expected[i]) << i;
    EXPECT_LT(r.simulated, every.simulated);  // still a branch and bound
    std::string csv = driver::plan_csv(s, r);
    EXPECT_NE(csv.find(",distinct_rank\n"), std::string::npos);
  }
  // The table: one row per group, the keys alike in every row printed once above it.
  driver::PlanOptions by_tp{.top = 3, .jobs = 2, .exhaustive = false, .progress = {}, .distinct = {"tp"}};
  std::string printed = printed_plan(s, driver::run_plan(topo, s, by_tp), 3);
  EXPECT_NE(printed.find("the best of each distinct tp (the other candidates of each: plan.csv)"),
            std::string::npos)
      << printed;
  for (const char* tp : {"\n   1 tp=", "\n   2 tp=", "\n   3 tp="})
    EXPECT_NE(printed.find(tp), std::string::npos) << printed;
  EXPECT_EQ(printed.find("\n   4 "), std::string::npos) << printed;  // three groups
}

// Without --distinct, when the rows below the winner are its layout with another setting (here the HSDP
// shard group), the output says so and points to --distinct layout; rows of other layouts do not.
TEST(Plan, SameLayoutRowsPointToDistinct) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "2"}});
  auto printed = [&](const Space& s) {
    return printed_plan(
        s, driver::run_plan(topo, s, {.top = 3, .jobs = 2, .exhaustive = false, .progress = {}}), 3);
  };
  Space groups = llama_space(
      topo,
      {{"parallel.tp", "1"},
       {"parallel.pp", "1"},
       {"parallel.cp", "1"},
       {"training.micro_batch", "1"},
       {"parallel.zero", "1"},
       {"training.global_batch", "32"},
       {"model.seq_len", "4096"}},
      {"parallel.tp", "parallel.pp", "parallel.cp", "training.micro_batch", "parallel.zero",
       "parallel.virtual_stages", "training.recompute", "parallel.sequence_parallel", "parallel.dp_overlap",
       "parallel.tp_overlap", "parallel.etp", "parallel.ep", "parallel.rank_order", "parallel.cp_algorithm"});
  std::string p = printed(groups);
  EXPECT_NE(p.find("rows below the winner are its layout with other settings; --distinct layout ranks the "
                   "best distinct layouts"),
            std::string::npos)
      << p;
  p = printed(small_space(topo));  // tp, pp and micro_batch searched: every row another layout
  EXPECT_EQ(p.find("--distinct layout"), std::string::npos) << p;
}

TEST(Plan, BadInputIsAClearError) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "2"}});
  std::string e = error_of([&] { llama_space(topo, {{"model.layers", "auto"}}, {}); });
  EXPECT_NE(e.find("model.layers cannot be searched; searchable: parallel.tp"), std::string::npos) << e;
  e = error_of([&] { llama_space(topo, {{"parallel.schedule", "[1f1b, interleaved]"}}, {}); });
  EXPECT_NE(e.find("a list searches a key, but parallel.schedule cannot be searched"), std::string::npos)
      << e;
  e = error_of([&] { llama_space(topo, {{"parallel.pp", "[]"}}, {}); });
  EXPECT_NE(e.find("an empty list"), std::string::npos) << e;
  e = error_of([&] { llama_space(topo, {{"parallel.tp", "[2, x]"}}, {}); });
  EXPECT_NE(e.find("'x' is not an integer"), std::string::npos) << e;
  driver::PlanRequest request{.topology_file = source_path("topologies/dgx-h100-superpod.yaml"),
                              .workload_file = kLlama8b,
                              .sets = {},
                              .as_written = false,
                              .options = {.top = 0, .jobs = 1, .exhaustive = false, .progress = {}},
                              .out = "",
                              .shard = ""};
  e = error_of([&] { driver::run_plan(request); });
  EXPECT_NE(e.find("--top 0"), std::string::npos) << e;
  request.options.top = 1;
  request.options.distinct = {"layout", "tpp"};
  e = error_of([&] { driver::run_plan(request); });
  EXPECT_NE(e.find("--distinct tpp: not a searchable key; expected a comma-separated list of layout, tp, cp"),
            std::string::npos)
      << e;
  request.options.distinct = {};
  request.workload_file = source_path("workloads/ctr-sparse-ps.yaml");
  e = error_of([&] { driver::run_plan(request); });
  EXPECT_NE(e.find("searches the parallel layout of kind transformer_lm"), std::string::npos) << e;
}

}  // namespace
}  // namespace podsim

namespace podsim {
namespace {

// Mixtral 8x7B on 64 H100: ep and etp searched, the MoE floor of the bound below every simulated step.
TEST(Plan, MoeSearchesExpertParallelismAndTheBoundHolds) {
  auto topo = testing::preset("dgx-h100-superpod", {{"nodes", "8"}});
  driver::Space s =
      workload_space(topo, testing::source_path("workloads/mixtral-8x7b.yaml"),
                     {{"parallel.tp", "[1, 2]"}, {"training.micro_batch", "[1, 2]"}},
                     {"parallel.pp", "parallel.zero", "parallel.shard_group", "parallel.dp_overlap",
                      "training.recompute", "parallel.cp", "parallel.virtual_stages", "parallel.tp_overlap"});
  driver::PlanOptions all{.top = 1, .jobs = 2, .exhaustive = true, .progress = {}};
  auto b = driver::run_plan(topo, s, all);
  std::set<int> eps;
  for (const auto& r : b.rows) {
    auto w = driver::resolve(s, r.values);
    eps.insert(w.parallel.ep);
    EXPECT_EQ(w.moe.experts % w.parallel.ep, 0);
    if (r.sim().ok()) {
      EXPECT_LE(r.estimate.lower_bound, r.sim().step_time) << driver::candidate_label(s, r.values);
    }
  }
  EXPECT_GE(eps.size(), 3u);  // 1, 2, 4, 8 experts per group
  all.exhaustive = false;
  auto a = driver::run_plan(topo, s, all);
  ASSERT_GE(a.ranked(), 1);
  EXPECT_EQ(a.rows[0].values, b.rows[0].values);
}

// ZeRO-2/3 traffic beside the compute slows it (overlap_compute_slowdown): the bound counts that
// stretch with dp_overlap (and nothing of it without), and stays below every simulated step.
TEST(Plan, ShardingBoundCountsTheSlowdownBesideItsTraffic) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "2"}});
  Overrides sets = {{"parallel.zero", "[2, 3]"},
                    {"parallel.dp_overlap", "[true, false]"},
                    {"parallel.tp", "1"},
                    {"parallel.pp", "1"},
                    {"parallel.dp", "16"},
                    {"parallel.cp", "1"},
                    {"training.global_batch", "32"},
                    {"training.micro_batch", "1"},
                    {"training.recompute", "selective"},
                    {"parallel.shard_group", "0"},
                    {"parallel.reshard_after_forward", "true"}};
  std::vector<std::string> fixed;
  for (const auto& [k, v] : sets)
    if (v.front() != '[') fixed.push_back(k);
  for (const char* k : {"parallel.sequence_parallel", "parallel.tp_overlap", "parallel.etp", "parallel.ep",
                        "parallel.virtual_stages", "parallel.rank_order", "parallel.cp_algorithm"})
    fixed.push_back(k);
  Space s = llama_space(topo, sets, fixed);
  auto r = driver::run_plan(topo, s, {.top = 4, .jobs = 2, .exhaustive = true, .progress = {}});
  ASSERT_EQ(r.ranked(), 4);
  std::map<std::pair<int, bool>, double> compute;
  for (const auto& row : r.rows) {
    auto w = driver::resolve(s, row.values);
    compute[{w.parallel.zero, w.parallel.dp_overlap}] = row.estimate.compute;
    EXPECT_LE(row.estimate.lower_bound, row.sim().step_time) << driver::candidate_label(s, row.values);
  }
  for (int zero : {2, 3}) {
    double overlapped = compute[std::pair{zero, true}], serial = compute[std::pair{zero, false}];
    EXPECT_GT(overlapped, serial) << "zero " << zero;
  }
}

// Data-parallel sharding of a MoE model in the bound: the dense part of each layer in the dp x cp group and
// the routed experts in the expert data-parallel group, each ZeRO stage as the builder runs it (with and
// without overlap, ZeRO-3 with and without resharding after the forward, one and two pipeline stages);
// exhaustive, the bound below every simulated step. Before it counted them, a MoE model's ZeRO-3 bound
// without overlap was as low as 0.14 of the step, which made searches simulate nearly every candidate.
TEST(Plan, MoeShardingBoundCountsDenseAndExpertTraffic) {
  auto topo = testing::preset("dgx-h100-superpod", {{"nodes", "2"}});
  // tp 8 x ep 2: the expert data-parallel group of 8 spans both servers, where the experts' gathers weigh.
  driver::Space s = workload_space(
      topo, testing::source_path("workloads/mixtral-8x7b.yaml"),
      {{"model.layers", "4"},
       {"parallel.tp", "8"},
       {"parallel.sequence_parallel", "true"},
       {"parallel.pp", "[1, 2]"},
       {"parallel.ep", "[2, 8]"},
       {"training.global_batch", "32"},
       {"training.micro_batch", "1"},
       {"moe.dispatcher", "alltoall"}},
      {"parallel.tp", "parallel.shard_group", "parallel.cp", "parallel.tp_overlap", "parallel.etp",
       "training.micro_batch", "training.recompute", "parallel.rank_order", "parallel.sequence_parallel"});
  driver::PlanOptions all{.top = 1, .jobs = 2, .exhaustive = true, .progress = {}};
  auto b = driver::run_plan(topo, s, all);
  int zero3 = 0;
  double worst = 1;
  for (const auto& r : b.rows) {
    if (!r.sim().ok()) continue;
    EXPECT_LE(r.estimate.lower_bound, r.sim().step_time) << driver::candidate_label(s, r.values);
    if (driver::resolve(s, r.values).parallel.zero == 3) {
      ++zero3;
      worst = std::min(worst, r.estimate.lower_bound / r.sim().step_time);
    }
  }
  EXPECT_GE(zero3, 4);
  EXPECT_GT(worst, 0.4);  // the experts' gathers count (0.13 without them)
}

// The data-parallel reductions a stage's last pass leaves (dp_time): with dp_overlap, chunk 0's last gradient
// bucket and its routed experts' reduce-scatter after the pass, all of its buckets after the pass starts;
// without, the whole reduction after the pass and ZeRO 1/2's parameter gather after the optimizer.
// Exhaustive over ZeRO 0-2, overlap and one or two stages, the bound below every simulated step; without a
// pipeline within 2% of it (the experts' reduction of a MoE model is long: before the bound counted it, it
// was 7-13% below these steps and a Mixtral search on 64 H100 simulated 1,539 candidates, now 407).
TEST(Plan, BoundCountsTheReductionsAfterTheLastPass) {
  auto topo = testing::preset("dgx-h100-superpod", {{"nodes", "2"}});
  driver::Space s = workload_space(topo, testing::source_path("workloads/mixtral-8x7b.yaml"),
                                   {{"model.layers", "4"},
                                    {"parallel.tp", "1"},
                                    {"parallel.pp", "[1, 2]"},
                                    {"parallel.ep", "8"},
                                    {"parallel.zero", "[0, 1, 2]"},
                                    {"parallel.dp_overlap", "[true, false]"},
                                    {"training.global_batch", "32"},
                                    {"training.micro_batch", "1"},
                                    {"training.recompute", "none"},
                                    {"moe.dispatcher", "alltoall"}},
                                   {"parallel.tp", "parallel.ep", "parallel.shard_group", "parallel.cp",
                                    "parallel.tp_overlap", "parallel.etp", "training.micro_batch",
                                    "training.recompute", "parallel.rank_order", "parallel.virtual_stages"});
  auto b = driver::run_plan(topo, s, {.top = 1, .jobs = 2, .exhaustive = true, .progress = {}});
  std::set<std::string> unpipelined;
  for (const auto& r : b.rows) {
    if (!r.sim().ok()) continue;
    std::string label = driver::candidate_label(s, r.values);
    EXPECT_LE(r.estimate.lower_bound, r.sim().step_time) << label;
    EXPECT_GT(r.estimate.dp_comm, 0) << label;
    auto w = driver::resolve(s, r.values);
    if (w.parallel.pp > 1) continue;
    unpipelined.insert(fmt::format("{}/{}", w.parallel.zero, w.parallel.dp_overlap));
    EXPECT_GT(r.estimate.lower_bound, 0.98 * r.sim().step_time) << label;
  }
  EXPECT_EQ(unpipelined.size(), 6u);
}

// Pipeline transfers in the bound: the first microbatch's between the stages and one for every call that
// holds a stage (workload::blocking_transfer_calls), blocking and with overlap_p2p_comm (whose steady state
// holds a stage only for its activation sends). Stages of one server each, their transfers over InfiniBand;
// exhaustive over pp 2 and 4 with 1 and 2 virtual stages, the bound below every simulated step and within
// 3% of it.
TEST(Plan, BoundCountsPipelineTransfers) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "4"}});
  std::map<std::tuple<std::string, int, int>, double> transfers;  // (overlap, pp, v) -> pp_comm
  for (const char* overlap : {"false", "true"}) {
    Overrides sets = {{"model.layers", "8"},
                      {"parallel.tp", "1"},
                      {"parallel.cp", "1"},
                      {"parallel.pp", "[2, 4]"},
                      {"parallel.virtual_stages", "[1, 2]"},
                      {"parallel.schedule", "interleaved"},
                      {"parallel.overlap_p2p_comm", overlap},
                      {"parallel.zero", "1"},
                      {"parallel.dp_overlap", "true"},
                      {"training.global_batch", "64"},
                      {"training.micro_batch", "2"},
                      {"training.recompute", "selective"}};
    std::vector<std::string> fixed;
    for (const auto& [k, v] : sets)
      if (v.front() != '[') fixed.push_back(k);
    for (const char* k : {"parallel.sequence_parallel", "parallel.tp_overlap", "parallel.shard_group",
                          "parallel.rank_order", "parallel.cp_algorithm"})
      fixed.push_back(k);
    Space s = llama_space(topo, sets, fixed);
    auto r = driver::run_plan(topo, s, {.top = 1, .jobs = 2, .exhaustive = true, .progress = {}});
    ASSERT_EQ(r.ranked(), 4) << overlap;
    for (const auto& row : r.rows) {
      std::string label = std::string(overlap) + " " + driver::candidate_label(s, row.values);
      EXPECT_LE(row.estimate.lower_bound, row.sim().step_time) << label;
      EXPECT_GT(row.estimate.lower_bound, 0.97 * row.sim().step_time) << label;
      EXPECT_GT(row.estimate.pp_comm, 0) << label;
      auto w = driver::resolve(s, row.values);
      transfers[{overlap, w.parallel.pp, w.parallel.virtual_stages}] = row.estimate.pp_comm;
    }
  }
  // 4-6% of the pp 4 steps (the bound would be 0.94 of them without); fewer calls hold a stage in the
  // overlapped steady state.
  auto pp_comm = [&](const char* overlap, int pp, int v) { return transfers[{overlap, pp, v}]; };
  EXPECT_LT(pp_comm("true", 4, 2), pp_comm("false", 4, 2));
  EXPECT_EQ(pp_comm("true", 4, 1), pp_comm("false", 4, 1));  // no virtual stages: no overlap
}

// The bound's caches key what they depend on: a pipeline transfer carries a 1/tp slice of the activations
// with sequence parallelism and (without scatter/gather) the whole of them without, so an estimator that
// timed one first must give the other what a fresh one gives.
TEST(Plan, BoundCachesTellSequenceParallelTransfersApart) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "4"}});
  std::map<std::string, workload::WorkloadConfig> config;
  for (const char* sp : {"false", "true"}) {
    Overrides sets = {{"model.layers", "8"},
                      {"parallel.tp", "2"},
                      {"parallel.cp", "1"},
                      {"parallel.pp", "2"},
                      {"parallel.dp", "8"},
                      {"parallel.virtual_stages", "1"},
                      {"parallel.sequence_parallel", sp},
                      {"parallel.scatter_gather", "false"},
                      {"parallel.tp_overlap", "false"},
                      {"parallel.zero", "1"},
                      {"parallel.shard_group", "0"},
                      {"parallel.dp_overlap", "true"},
                      {"training.global_batch", "64"},
                      {"training.micro_batch", "1"},
                      {"training.recompute", "selective"}};
    std::vector<std::string> fixed = {"parallel.rank_order", "parallel.cp_algorithm",
                                      "parallel.reshard_after_forward", "parallel.ep", "parallel.etp"};
    for (const auto& [k, v] : sets) fixed.push_back(k);
    Space s = llama_space(topo, sets, fixed);
    auto r = driver::run_plan(topo, s, {.top = 1, .jobs = 1, .exhaustive = true, .progress = {}});
    ASSERT_EQ(r.rows.size(), 1u) << sp;
    config[sp] = driver::resolve(s, r.rows[0].values);
  }
  for (auto [first, then] : {std::pair{"false", "true"}, std::pair{"true", "false"}}) {
    driver::Estimator shared(topo), fresh(topo);
    shared.estimate(config[first]);
    auto after = shared.estimate(config[then]), alone = fresh.estimate(config[then]);
    EXPECT_GT(alone.pp_comm, 0) << then;
    EXPECT_EQ(after.pp_comm, alone.pp_comm) << first << " then " << then;
    EXPECT_EQ(after.lower_bound, alone.lower_bound) << first << " then " << then;
  }
  driver::Estimator one(topo);
  EXPECT_LT(one.estimate(config["true"]).pp_comm, one.estimate(config["false"]).pp_comm);
}

// Stages that straddle the scale-up domains: 12-GPU NVLink domains holding three 8-rank stages, so stage 1's
// data-parallel and expert groups cross the scale-out fabric while stage 0's stay inside one domain. Each
// stage's chain counts its own groups' collectives (ZeRO-2's reduce-scatter after every backward, the
// dispatch); exhaustive, the bound below every simulated step and within 0.7 of the ZeRO-2 steps. With
// stage 0's groups standing for all (before), some were 0.54 of their steps here, and a GB200 NVL72
// DeepSeek-V3 search (64-rank stages on 72-GPU racks) simulated every ZeRO-2 candidate.
TEST(Plan, StagesAcrossScaleUpDomainsCountTheirOwnGroups) {
  auto topo = testing::preset(
      "dgx-gb200-superpod",
      {{"nodes", "2"}, {"node.devices", "12"}, {"node.nics", "12"}, {"node.scale_up.domain_devices", "12"}});
  driver::Space s = workload_space(topo, testing::source_path("workloads/mixtral-8x7b.yaml"),
                                   {{"model.layers", "6"},
                                    {"parallel.tp", "1"},
                                    {"parallel.pp", "3"},
                                    {"parallel.ep", "[2, 4, 8]"},
                                    {"parallel.zero", "[1, 2]"},
                                    {"parallel.shard_group", "0"},
                                    {"training.global_batch", "32"},
                                    {"training.micro_batch", "1"},
                                    {"training.recompute", "none"},
                                    {"moe.dispatcher", "alltoall"}},
                                   {"parallel.tp", "parallel.pp", "parallel.shard_group", "parallel.cp",
                                    "parallel.virtual_stages", "parallel.tp_overlap", "parallel.etp",
                                    "training.micro_batch", "training.recompute", "moe.dispatcher"});
  driver::PlanOptions all{.top = 1, .jobs = 2, .exhaustive = true, .progress = {}};
  auto b = driver::run_plan(topo, s, all);
  int zero2 = 0;
  double worst = 1;
  for (const auto& r : b.rows) {
    if (!r.sim().ok()) continue;
    EXPECT_LE(r.estimate.lower_bound, r.sim().step_time) << driver::candidate_label(s, r.values);
    auto w = driver::resolve(s, r.values);
    if (w.parallel.zero == 2 && w.parallel.rank_order == workload::RankOrder::tp_cp_dp_pp) {
      ++zero2;
      worst = std::min(worst, r.estimate.lower_bound / r.sim().step_time);
    }
  }
  EXPECT_GE(zero2, 4);
  EXPECT_GT(worst, 0.7);
}

// The refined bound (Estimator::refine, asked for by each candidate about to be simulated): the busiest
// link's load of the whole step's dispatches and data-parallel collectives, every group of every stage.
// Where expert-parallel groups and expert data-parallel groups both cross the scale-out NICs (ep 8 on
// 12-GPU domains: one EP group straddles two, every expert data-parallel group spans both), their traffic
// shares the links, which no single group's time shows; the refined bound stays below the simulated step
// for each ZeRO stage and rises toward it where the sharding traffic is heaviest (ZeRO-3 with ep 8: 0.237
// -> 0.281 s of a 0.297 s step).
TEST(Plan, RefinedBoundCountsTheStepsFabricLoad) {
  auto topo = testing::preset(
      "dgx-gb200-superpod",
      {{"nodes", "2"}, {"node.devices", "12"}, {"node.nics", "12"}, {"node.scale_up.domain_devices", "12"}});
  const std::vector<std::string> every_key = {"parallel.tp",
                                              "parallel.pp",
                                              "parallel.dp",
                                              "parallel.ep",
                                              "parallel.etp",
                                              "parallel.cp",
                                              "parallel.zero",
                                              "parallel.shard_group",
                                              "parallel.dp_overlap",
                                              "parallel.tp_overlap",
                                              "parallel.virtual_stages",
                                              "parallel.sequence_parallel",
                                              "parallel.rank_order",
                                              "parallel.cp_algorithm",
                                              "parallel.reshard_after_forward",
                                              "training.micro_batch",
                                              "training.recompute",
                                              "moe.dispatcher"};
  double most = 1;
  for (const char* zero : {"0", "1", "2", "3"})
    for (const char* ep : {"4", "8"}) {
      driver::Space s = workload_space(topo, testing::source_path("workloads/mixtral-8x7b.yaml"),
                                       {{"model.layers", "4"},
                                        {"parallel.tp", "1"},
                                        {"parallel.pp", "1"},
                                        {"parallel.dp", "24"},
                                        {"parallel.ep", ep},
                                        {"parallel.zero", zero},
                                        {"parallel.shard_group", "0"},
                                        {"parallel.dp_overlap", "true"},
                                        {"training.global_batch", "96"},
                                        {"training.micro_batch", "1"},
                                        {"training.recompute", "none"},
                                        {"moe.dispatcher", "alltoall"}},
                                       every_key);
      driver::PlanOptions one{.top = 1, .jobs = 1, .exhaustive = false, .progress = {}};
      auto result = driver::run_plan(topo, s, one);
      ASSERT_EQ(result.rows.size(), 1u) << zero << " " << ep;
      const auto& row = result.rows[0];
      ASSERT_TRUE(row.sim().ok()) << row.sim().detail;
      driver::Estimator fresh(topo);
      double before = fresh.estimate(driver::resolve(s, row.values)).lower_bound;
      EXPECT_GT(row.estimate.fabric_load, 0) << zero << " " << ep;
      EXPECT_GE(row.estimate.lower_bound, before);
      EXPECT_LE(row.estimate.lower_bound, row.sim().step_time) << "zero " << zero << " ep " << ep;
      most = std::max(most, row.estimate.lower_bound / before);
    }
  EXPECT_GT(most, 1.05);  // the fabric load rose above the per-column bound somewhere
}

// The bound ends with the slowest stage's optimizer step (workload::optimizer_step_seconds), which starts
// once every stage's gradients are complete: on one stage it is the simulated step's optimizer time exactly,
// the distributed optimizer (ZeRO 1) shrinks it by the shard group, and the bound stays below the step.
TEST(Plan, BoundEndsWithTheOptimizerStep) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "1"}});
  const std::vector<std::string> fixed = {"parallel.tp",       "parallel.pp",         "parallel.dp",
                                          "parallel.zero",     "parallel.dp_overlap", "training.micro_batch",
                                          "training.recompute"};
  std::map<std::string, double> optimizer;
  for (const char* zero : {"0", "1"})
    for (const char* pp : {"1", "2"}) {
      Space s = llama_space(topo,
                            {{"model.layers", "4"},
                             {"parallel.tp", "1"},
                             {"parallel.pp", pp},
                             {"parallel.dp", pp == std::string("1") ? "8" : "4"},
                             {"parallel.zero", zero},
                             {"parallel.dp_overlap", "true"},
                             {"training.global_batch", "32"},
                             {"training.micro_batch", "1"},
                             {"training.recompute", "none"}},
                            fixed);
      driver::PlanOptions all{.top = 1, .jobs = 1, .exhaustive = true, .progress = {}};
      auto result = driver::run_plan(topo, s, all);
      for (const auto& r : result.rows) {
        if (!r.simulated() || !r.sim().ok()) continue;
        std::string label = driver::candidate_label(s, r.values);
        EXPECT_GT(r.estimate.optimizer, 0) << label;
        EXPECT_LE(r.estimate.lower_bound, r.sim().step_time) << label;
        double simulated = r.sim().breakdown[static_cast<size_t>(plan::Category::optimizer)];
        if (pp == std::string("1")) {
          EXPECT_NEAR(r.estimate.optimizer, simulated, 1e-9 * simulated) << label;
        }
        optimizer[std::string(zero) + "/" + pp] = r.estimate.optimizer;
      }
    }
  ASSERT_EQ(optimizer.size(), 4u);
  // Adam on an eighth of the parameters (the memset of the whole gradient buffer stays: ZeRO 1)
  EXPECT_LT(optimizer["1/1"], 0.6 * optimizer["0/1"]);
  EXPECT_LT(optimizer["0/2"], optimizer["0/1"]);  // each stage steps its half of the layers
}

// The MoE mechanisms the bound counts, each where the builder runs it: dispatch and combine across servers
// (ep 16 on 8-GPU servers), beside a shared expert (moe.overlap: dispatch) or the other pass (combined_1f1b),
// a host-bound block
// (moe.host_*), dense first layers in an uneven stage, full recomputation dispatching again; exhaustive,
// the bound below every simulated step, and the dispatch on it wherever it is not hidden.
TEST(Plan, MoeBoundCountsDispatchHostAndSharedExperts) {
  auto topo = testing::preset("dgx-h100-superpod", {{"nodes", "4"}});
  const std::string file = testing::source_path("workloads/mixtral-8x7b.yaml");
  for (const char* overlap : {"none", "dispatch", "combined_1f1b"}) {
    bool combined = std::string(overlap) == "combined_1f1b";  // pp 1, recompute none only (it refuses others)
    driver::Space s = workload_space(
        topo, file,
        {{"model.layers", "6"},
         {"moe.experts", "16"},
         {"moe.first_dense_layers", "1"},
         {"moe.shared_experts", "1"},
         {"moe.shared_ffn_hidden", "4096"},
         {"moe.overlap", overlap},
         {"moe.host_forward_us", "900"},
         {"moe.host_backward_us", "1500"},
         {"parallel.tp", "1"},
         {"parallel.pp", "[1, 2]"},
         {"parallel.ep", "[4, 8, 16]"},
         {"training.global_batch", "64"},
         {"training.recompute", "[none, full]"}},
        {"parallel.tp", "parallel.zero", "parallel.shard_group", "parallel.dp_overlap", "parallel.cp",
         "parallel.virtual_stages", "parallel.tp_overlap", "parallel.etp", "training.micro_batch"});
    driver::PlanOptions all{.top = 1, .jobs = 2, .exhaustive = true, .progress = {}};
    auto b = driver::run_plan(topo, s, all);
    int ran = 0, across = 0;
    for (const auto& r : b.rows) {
      if (!r.sim().ok()) continue;
      ++ran;
      auto w = driver::resolve(s, r.values);
      EXPECT_LE(r.estimate.lower_bound, r.sim().step_time)
          << overlap << " " << driver::candidate_label(s, r.values);
      if (w.parallel.ep == 16 && r.estimate.ep_comm > 0) ++across;
    }
    EXPECT_GE(ran, combined ? 3 : 6) << overlap;
    // ep 16 leaves the server: its dispatch cannot all hide (the bound counts none under combined 1F1B)
    if (!combined) {
      EXPECT_GT(across, 0) << overlap;
    }
  }
}

// parallel.pipeline_layout (DeepSeek-V3's 61 layers split only by an explicit layout): pp takes the values
// that divide a layout's chunk count, virtual_stages the chunks per stage of those layouts, and every
// candidate simulated places its layers by one of them (or pp 1, no pipeline).
TEST(Plan, PipelineLayoutsGiveTheSplitsSearched) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "4"}});
  Space s = llama_space(topo,
                        {{"model.layers", "10"},
                         {"parallel.pipeline_layout", "[\"Et*4|t*2|t*3|tL\", \"Et|t|t|t|tt|tt|t|tL\"]"},
                         {"parallel.tp", "4"},
                         {"parallel.pp", "auto"},
                         {"parallel.virtual_stages", "auto"},
                         {"parallel.schedule", "interleaved"},
                         {"training.global_batch", "32"},
                         {"parallel.zero", "1"}},
                        {"parallel.tp", "parallel.cp", "training.recompute", "parallel.sequence_parallel",
                         "parallel.zero", "parallel.shard_group", "parallel.dp_overlap",
                         "parallel.tp_overlap", "parallel.etp", "parallel.ep", "training.micro_batch"});
  driver::PlanOptions all{.top = 1, .jobs = 2, .exhaustive = true, .progress = {}};
  auto b = driver::run_plan(topo, s, all);
  std::set<std::pair<int, int>> splits;
  for (const auto& r : b.rows) {
    auto w = driver::resolve(s, r.values);
    if (r.sim().ok()) splits.insert({w.parallel.pp, w.parallel.virtual_stages});
  }
  EXPECT_EQ(splits, (std::set<std::pair<int, int>>{{1, 1}, {2, 2}, {2, 4}, {4, 1}, {4, 2}, {8, 1}}))
      << b.simulated;
}

// Context parallelism across servers (tp 8 fills each): ring attention's transfers that its attention
// blocks cannot hide enter the bound, which stays below every simulated step.
TEST(Plan, ContextParallelRingCountsInTheBoundAndTheBoundHolds) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "4"}});
  Space s = llama_space(topo,
                        {{"parallel.tp", "8"},
                         {"parallel.cp", "[1, 2, 4]"},
                         {"parallel.pp", "1"},
                         {"training.micro_batch", "[1, 2]"},
                         {"training.global_batch", "16"},
                         {"model.layers", "8"},
                         {"model.seq_len", "16384"},
                         {"parallel.zero", "1"},
                         {"parallel.sequence_parallel", "true"}},
                        {"parallel.tp", "parallel.pp", "parallel.virtual_stages", "training.recompute",
                         "parallel.sequence_parallel", "parallel.zero", "parallel.shard_group",
                         "parallel.dp_overlap", "parallel.tp_overlap", "parallel.etp", "parallel.ep"});
  driver::PlanOptions all{.top = 1, .jobs = 2, .exhaustive = true, .progress = {}};
  auto b = driver::run_plan(topo, s, all);
  std::map<int, double> exposed;  // cp -> the most any candidate's bound counts
  for (const auto& r : b.rows) {
    auto w = driver::resolve(s, r.values);
    if (!r.sim().ok()) continue;
    exposed[w.parallel.cp] = std::max(exposed[w.parallel.cp], r.estimate.cp_comm);
    EXPECT_LE(r.estimate.lower_bound, r.sim().step_time) << driver::candidate_label(s, r.values);
  }
  ASSERT_EQ(exposed.size(), 3u);
  EXPECT_EQ(exposed[1], 0);
  // cp 2: a ring step (8k tokens' K and V of one query group) hides behind a block of 8k x 16k attention;
  // cp 4 halves the block and quarters its work, the transfer over the NIC does not shrink as fast.
  EXPECT_GT(exposed[4], 0);
}

// Ring attention over two servers (tp 2 x cp 8): many small KV steps per pass. The builder runs a pass's
// steps as one merged plan that pays the wires' latency once; a bound counting it per step rose above
// the simulated step by up to 1.7% (128 microbatches of selective recomputation). It must stay below.
TEST(Plan, ManySmallRingStepsStayAboveTheBound) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "2"}});
  Space s =
      llama_space(topo,
                  {{"parallel.tp", "2"},
                   {"parallel.cp", "8"},
                   {"parallel.pp", "1"},
                   {"training.micro_batch", "[1, 2]"},
                   {"training.global_batch", "128"},
                   {"model.layers", "4"},
                   {"training.recompute", "[none, selective]"},
                   {"parallel.sequence_parallel", "true"},
                   {"parallel.tp_overlap", "[true, false]"},
                   {"parallel.cp_algorithm", "ring"},
                   {"parallel.zero", "1"}},
                  {"parallel.tp", "parallel.cp", "parallel.pp", "parallel.cp_algorithm", "parallel.zero",
                   "parallel.sequence_parallel", "parallel.dp_overlap", "parallel.virtual_stages",
                   "parallel.shard_group", "parallel.etp", "parallel.ep", "parallel.rank_order"});
  driver::PlanOptions all{.top = 1, .jobs = 2, .exhaustive = true, .progress = {}};
  auto b = driver::run_plan(topo, s, all);
  ASSERT_EQ(b.ranked(), 8);
  for (const auto& r : b.rows)
    if (r.sim().ok()) {
      EXPECT_GT(r.estimate.cp_comm, 0) << driver::candidate_label(s, r.values);
      EXPECT_LE(r.estimate.lower_bound, r.sim().step_time) << driver::candidate_label(s, r.values);
    }
}

// ZeRO-3 beside an interleaved pipeline whose first and last chunks hold only the embedding and the loss:
// the bound still counts the gathers before every pass of a chunk with layers (taking the fewest layers
// any chunk holds, zero here, had dropped them all), and stays below the simulated step.
TEST(Plan, Zero3BoundCountsGathersBesideEmbeddingOnlyChunks) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "2"}});
  Overrides sets = {{"parallel.zero", "3"},
                    {"parallel.pp", "2"},
                    {"parallel.tp", "1"},
                    {"parallel.cp", "1"},
                    {"parallel.schedule", "interleaved"},
                    {"parallel.virtual_stages", "17"},
                    {"parallel.embedding_in_pipeline_split", "true"},
                    {"parallel.loss_in_pipeline_split", "true"},
                    {"parallel.rank_order", "tp-cp-pp-dp"},
                    {"training.grad_reduce_precision", "fp32"},
                    {"training.global_batch", "64"},
                    {"training.micro_batch", "1"}};
  std::vector<std::string> fixed;
  for (const auto& [k, v] : sets) fixed.push_back(k);
  for (const char* k :
       {"parallel.dp", "parallel.shard_group", "parallel.dp_overlap", "parallel.sequence_parallel",
        "parallel.tp_overlap", "parallel.cp_algorithm", "training.recompute", "parallel.etp", "parallel.ep"})
    fixed.push_back(k);
  Space s = llama_space(topo, sets, fixed);
  // Two candidates: resharding after the forward or not (parallel.reshard_after_forward, searched).
  auto r = driver::run_plan(topo, s, {.top = 2, .jobs = 1, .exhaustive = true, .progress = {}});
  ASSERT_EQ(r.ranked(), 2);
  for (const auto& row : r.rows) {
    EXPECT_GT(row.estimate.dp_comm, 0);
    EXPECT_LE(row.estimate.lower_bound, row.sim().step_time);
  }
}

// parallel.cp_algorithm is searched where there is context parallelism: the all-gather variant's serial
// collectives count in the bound, which stays below every simulated step; with sliding-window attention
// the ring is refused (Transformer Engine), so only the all-gather variant runs cp > 1.
TEST(Plan, ContextParallelAlgorithmIsSearchedAndTheBoundHolds) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "4"}});
  Overrides sets = {
      {"parallel.tp", "8"},          {"parallel.cp", "[1, 2, 4]"},    {"parallel.pp", "1"},
      {"training.micro_batch", "1"}, {"training.global_batch", "16"}, {"model.layers", "8"},
      {"model.seq_len", "16384"},    {"parallel.zero", "1"},          {"parallel.sequence_parallel", "true"}};
  std::vector<std::string> fixed = {"parallel.tp",
                                    "parallel.pp",
                                    "parallel.virtual_stages",
                                    "training.recompute",
                                    "parallel.sequence_parallel",
                                    "parallel.zero",
                                    "parallel.shard_group",
                                    "parallel.dp_overlap",
                                    "parallel.tp_overlap",
                                    "parallel.etp",
                                    "parallel.ep",
                                    "training.micro_batch"};
  driver::PlanOptions all{.top = 1, .jobs = 2, .exhaustive = true, .progress = {}};
  driver::SkipCounts skipped;
  auto algorithms = [&](const Overrides& extra) {
    auto with = sets;
    with.insert(with.end(), extra.begin(), extra.end());
    Space s = llama_space(topo, with, fixed);
    EXPECT_TRUE(s.keys[key_index(s, "parallel.cp_algorithm")].searched);
    auto r = driver::run_plan(topo, s, all);
    skipped = r.skipped;
    std::map<std::pair<int, workload::CpAlgorithm>, double> gathered;  // (cp, algorithm) -> cp bound
    for (const auto& row : r.rows) {
      auto w = driver::resolve(s, row.values);
      if (!row.sim().ok()) continue;
      EXPECT_LE(row.estimate.lower_bound, row.sim().step_time) << driver::candidate_label(s, row.values);
      gathered[{w.parallel.cp, w.parallel.cp_algorithm}] = row.estimate.cp_comm;
    }
    return gathered;
  };
  auto full = algorithms({});
  EXPECT_EQ(full.size(), 5u);  // cp 1 once, cp 2 and 4 with either algorithm
  EXPECT_GT((full[{2, workload::CpAlgorithm::all_gather}]), 0);
  auto windowed = algorithms({{"model.sliding_window", "4096"}});
  EXPECT_EQ(windowed.size(), 3u);  // cp 1, and cp 2 and 4 with the all-gather variant only
  EXPECT_EQ(windowed.count({2, workload::CpAlgorithm::ring}), 0u);
  EXPECT_EQ(
      skipped["ring context parallelism with sliding-window attention (Transformer Engine: all_gather only)"],
      2);  // cp 2 and 4, one reason
}
}  // namespace
}  // namespace podsim

#include "podsim/report/plan_html.hpp"

namespace podsim {
namespace {

TEST(PlanReport, ParetoFrontKeepsWhatNothingBeatsWithLessMemory) {
  report::PlanReport r{"t", {"rank", "tokens_per_s", "memory_GiB"}, {}, "why"};
  r.rows = {{"1", "100", "50"}, {"2", "90", "30"}, {"3", "80", "40"}, {"", "", "10"}, {"4", "70", "20"}};
  EXPECT_EQ(report::pareto_front(r), (std::vector<size_t>{4, 1, 0}));  // 80 at 40 GiB: 90 needs only 30
  std::string html = report::plan_report_html(r);
  EXPECT_NE(html.find("Pareto front"), std::string::npos);
  EXPECT_NE(html.find("\"front\":[3,1,0]"), std::string::npos);  // indices among the 4 simulated rows
}

}  // namespace
}  // namespace podsim

namespace podsim {
namespace {

// `tp: auto` in `podsim run`: the plan picks the key, the other keys as written.
TEST(Plan, RunPinsSearchedKeysToThePlansBest) {
  auto topo = testing::preset("dgx-h100-superpod", {{"nodes", "2"}});
  const std::string file = testing::source_path("workloads/llama3-8b.yaml");
  Overrides none = driver::pin_searched_keys(file, {{"parallel.pp", "2"}, {"parallel.zero", "1"}}, topo);
  EXPECT_EQ(none.size(), 2u);  // nothing searched: unchanged
  Overrides sets = {{"parallel.tp", "auto"}, {"parallel.zero", "1"}, {"training.global_batch", "32"}};
  Overrides pinned = driver::pin_searched_keys(file, sets, topo);
  ASSERT_GE(pinned.size(), 5u);
  std::map<std::string, std::string> by_key(pinned.begin() + 3, pinned.end());
  EXPECT_TRUE(by_key["parallel.tp"] == "1" || by_key["parallel.tp"] == "2")
      << by_key["parallel.tp"];  // dp 8 on 16
  EXPECT_EQ(by_key["parallel.schedule"], "1f1b");
  EXPECT_EQ(by_key.count("parallel.pp"), 0u);  // as written
  std::string e = testing::error_of([&] {
    driver::pin_searched_keys(file, {{"parallel.tp", "[16]"}}, topo);
  });
  EXPECT_NE(e.find("no combination of the searched keys divides, fits and runs"), std::string::npos) << e;
}

}  // namespace
}  // namespace podsim

namespace podsim {
namespace {

// moe.dispatcher is searched where tokens cross ranks: across servers HybridEP's two stages beat NCCL's
// all-to-all for Qwen3-30B-A3B (ep 16 on two DGX H100), inside each server (ep 8 on two) Mixtral's top-2 of 8
// experts sends the all-to-all's bytes either way and NCCL's faster NVLink rate wins; a dense model has
// nothing to search; a value outside the dispatchers is a clear error.
driver::Space dispatcher_space(const topology::Topology& topo, const std::string& preset_file, int ep,
                               const std::string& dispatcher) {
  const std::string file = testing::source_path(preset_file);
  ConfigNode root = ConfigNode::load_file(file);
  int devices = topo.compute_device_count();
  for (const auto& [k, v] : Overrides{{"parallel.tp", "1"},
                                      {"parallel.pp", "1"},
                                      {"parallel.cp", "1"},
                                      {"parallel.dp", std::to_string(devices)},
                                      {"parallel.ep", std::to_string(ep)},
                                      {"parallel.etp", "1"},
                                      {"training.global_batch", std::to_string(4 * devices)},
                                      {"training.micro_batch", "1"},
                                      {"training.recompute", "full"},
                                      {"moe.dispatcher", dispatcher}})
    root.apply_override(k, v, "test");
  return driver::read_space(root, file, topo, false, {});
}

// The winner's hints reach `podsim plan`'s output through the worker processes: expert-parallel groups of
// 64 on two NVL72 racks, the second pipeline stage's straddling them.
TEST(Plan, WinnerCarriesItsNvlinkDomainHint) {
  auto racks = preset("dgx-gb200-superpod", {{"nodes", "2"}});
  const std::string file = testing::source_path("workloads/qwen3-30b-a3b.yaml");
  ConfigNode root = ConfigNode::load_file(file);
  Overrides job = testing::expert_groups_of_64_in_two_stages();
  job.push_back({"moe.dispatcher", "alltoall"});
  for (const auto& [k, v] : job) root.apply_override(k, v, "test");
  auto space = driver::read_space(root, file, racks, false, {});
  auto r = driver::run_plan(racks, space, {.top = 1, .jobs = 1, .exhaustive = false, .progress = {}});
  ASSERT_EQ(r.ranked(), 1);
  ASSERT_EQ(r.rows[0].sim().hints.size(), 1u);
  EXPECT_NE(r.rows[0].sim().hints[0].find("expert-parallel groups of 64 ranks span two NVLink domains"),
            std::string::npos)
      << r.rows[0].sim().hints[0];
  std::string printed = printed_plan(space, r, 1);
  EXPECT_NE(printed.find("hint: 1 of the 2 expert-parallel groups"), std::string::npos) << printed;
  EXPECT_NE(printed.find("devices_used=64"), std::string::npos) << printed;
}

TEST(Plan, DispatcherIsSearchedWhereTokensCrossRanks) {
  driver::PlanOptions all{.top = 2, .jobs = 2, .exhaustive = true, .progress = {}};
  auto best = [&](const topology::Topology& topo, const driver::Space& s) {
    auto r = driver::run_plan(topo, s, all);
    EXPECT_EQ(r.ranked(), 2);
    if (r.rows.empty()) return s.base;
    return driver::resolve(s, r.rows[0].values);
  };
  auto two = preset("dgx-h100-superpod", {{"nodes", "2"}});
  auto qwen = dispatcher_space(two, "workloads/qwen3-30b-a3b.yaml", 16, "auto");
  EXPECT_TRUE(qwen.keys[key_index(qwen, "moe.dispatcher")].searched);
  auto across = best(two, qwen);
  EXPECT_EQ(across.moe.dispatcher, workload::MoeDispatcher::flex);
  EXPECT_EQ(across.moe.dispatcher_sms, workload::kFlexDispatcherSms);  // Megatron-Core's default
  auto inside =
      best(two, dispatcher_space(two, "workloads/mixtral-8x7b.yaml", 8, "auto"));  // ep 8 per server
  EXPECT_EQ(inside.moe.dispatcher, workload::MoeDispatcher::alltoall);
  EXPECT_EQ(inside.moe.dispatcher_sms, 0);  // NCCL's kernels: the profile's share
  // A list may name the all-gather dispatcher too.
  auto listed = dispatcher_space(two, "workloads/mixtral-8x7b.yaml", 8, "[alltoall, allgather]");
  EXPECT_EQ(listed.keys[key_index(listed, "moe.dispatcher")].values.size(), 2u);
  std::string e = error_of([&] { dispatcher_space(two, "workloads/mixtral-8x7b.yaml", 8, "[deepep]"); });
  EXPECT_NE(e.find("'deepep' is not one of alltoall, allgather, flex"), std::string::npos) << e;
  // ep fixed while dp is searched: the base is read before dp exists; every candidate keeps ep 16.
  ConfigNode root = ConfigNode::load_file(testing::source_path("workloads/qwen3-30b-a3b.yaml"));
  root.apply_override("parallel.ep", "16", "test");
  root.apply_override("training.global_batch", "64", "test");
  Space fixed_ep = driver::read_space(root, testing::source_path("workloads/qwen3-30b-a3b.yaml"), two, true,
                                      {"parallel.ep"});
  EXPECT_EQ(fixed_ep.base.parallel.ep, 16);
  driver::SkipCounts skipped;
  long long n = driver::enumerate(
      fixed_ep,
      [&](const workload::WorkloadConfig& w, const driver::CandidateValues&) {
        EXPECT_EQ(w.parallel.ep, 16);
      },
      skipped);
  EXPECT_GT(n, 0);
  EXPECT_GT(skipped["ep*etp does not divide tp*cp*dp"], 0);
  // Llama 3 8B has no moe: section: nothing to search (and no moe: section made up for it).
  Space dense = llama_space(two, {}, {});
  EXPECT_FALSE(dense.keys[key_index(dense, "moe.dispatcher")].searched);
  EXPECT_FALSE(dense.base.moe.enabled());
}

// parallel.rank_order under auto: both orders where the order decides something (a server holds more than
// one tp x cp block, or the fat tree tapers), Megatron-Core's default alone elsewhere; never the second
// order where one stage or one replica makes the two one layout; with MoE, tp-cp-pp-dp only where
// Megatron-Core allows it (pp 1, or ep x etp = tp x cp).
TEST(Plan, RankOrderIsSearchedWhereItDecidesSomething) {
  auto orders = [](const Space& s) {
    std::map<std::string, std::set<workload::RankOrder>> seen;  // "tp=..,pp=..,dp=.." -> orders
    driver::SkipCounts skipped;
    driver::enumerate(
        s,
        [&](const workload::WorkloadConfig& w, const driver::CandidateValues&) {
          const auto& p = w.parallel;
          if (p.rank_order == workload::RankOrder::tp_cp_pp_dp) {
            EXPECT_GT(p.pp, 1);
            EXPECT_GT(p.dp, 1);
            if (w.moe.enabled()) {
              EXPECT_EQ(p.ep * p.etp, p.tp * p.cp);
            }
          }
          seen[fmt::format("tp={} cp={} pp={} dp={}", p.tp, p.cp, p.pp, p.dp)].insert(p.rank_order);
        },
        skipped);
    return std::make_pair(seen, skipped);
  };
  auto count_both = [](const std::map<std::string, std::set<workload::RankOrder>>& seen) {
    return std::count_if(seen.begin(), seen.end(), [](const auto& e) { return e.second.size() == 2; });
  };
  auto tapered = preset("dgx-h100-superpod", testing::two_pods("8"));
  auto flat = preset("dgx-h100-superpod", testing::two_pods("1"));
  Overrides tp8 = {{"parallel.tp", "8"}, {"parallel.cp", "1"}, {"parallel.zero", "1"}};
  std::vector<std::string> fixed = {"parallel.tp", "parallel.cp", "parallel.zero"};
  // tp 8 fills a server: on the non-blocking fabric the default alone, on the tapered one both.
  auto [flat_seen, flat_skipped] = orders(llama_space(flat, tp8, fixed));
  EXPECT_EQ(count_both(flat_seen), 0);
  auto [tapered_seen, tapered_skipped] = orders(llama_space(tapered, tp8, fixed));
  EXPECT_GT(count_both(tapered_seen), 0);
  EXPECT_EQ(tapered_seen["tp=8 cp=1 pp=1 dp=8"].size(), 1u);  // one stage: one layout
  // tp 2 leaves four blocks in a server: both orders even without a taper.
  Overrides tp2 = {{"parallel.tp", "2"}, {"parallel.cp", "1"}, {"parallel.zero", "1"}};
  auto [tp2_seen, tp2_skipped] = orders(llama_space(flat, tp2, fixed));
  EXPECT_EQ(tp2_seen["tp=2 cp=1 pp=4 dp=8"].size(), 2u);
  // A list searches both anyway, and a bad element names the valid ones.
  auto listed = llama_space(flat, {{"parallel.rank_order", "[tp-cp-dp-pp, tp-cp-pp-dp]"}}, {});
  EXPECT_EQ(listed.keys[key_index(listed, "parallel.rank_order")].values.size(), 2u);
  std::string e = error_of([&] { llama_space(flat, {{"parallel.rank_order", "[tp-dp-pp]"}}, {}); });
  EXPECT_NE(e.find("'tp-dp-pp' is not one of tp-cp-dp-pp, tp-cp-pp-dp"), std::string::npos) << e;
  // MoE on the tapered pods: Megatron-Core's rule prunes the rest, said by reason.
  ConfigNode root = ConfigNode::load_file(testing::source_path("workloads/mixtral-8x7b.yaml"));
  root.apply_override("training.global_batch", "64", "test");
  Space moe =
      driver::read_space(root, testing::source_path("workloads/mixtral-8x7b.yaml"), tapered, true, {});
  auto [moe_seen, moe_skipped] = orders(moe);
  EXPECT_GT(count_both(moe_seen), 0);
  EXPECT_GT(moe_skipped["rank_order tp-cp-pp-dp with MoE and pp > 1 needs ep*etp = tp*cp"], 0);
}

// Every candidate of Llama 3 8B over the list-valued keys of `sets`, simulated (its scalars and the
// usual side keys fixed).
struct ExhaustiveSearch {
  Space space;
  driver::PlanResult result;
};
ExhaustiveSearch exhaustive_search(const topology::Topology& topo, const std::string& file,
                                   const Overrides& sets) {
  std::vector<std::string> fixed;
  for (const auto& [k, v] : sets)
    if (v.front() != '[') fixed.push_back(k);
  for (const char* k : {"parallel.sequence_parallel", "parallel.tp_overlap", "parallel.shard_group",
                        "parallel.rank_order", "parallel.cp_algorithm"})
    fixed.push_back(k);
  Space s = workload_space(topo, file, sets, fixed);
  auto r = driver::run_plan(topo, s, {.top = 1, .jobs = 2, .exhaustive = true, .progress = {}});
  return {std::move(s), std::move(r)};
}

ExhaustiveSearch exhaustive_llama(const topology::Topology& topo, const Overrides& sets) {
  return exhaustive_search(topo, kLlama8b, sets);
}

// Every simulated candidate's bound at most its step and above `tight` of it (only the unpipelined ones'
// with `unpipelined_only`); how many were simulated.
int expect_bounds_below_steps(const ExhaustiveSearch& search, double tight, bool unpipelined_only = false) {
  const auto& [s, r] = search;
  int simulated = 0;
  for (const auto& row : r.rows) {
    if (!row.sim().ok()) continue;
    std::string label = driver::candidate_label(s, row.values);
    EXPECT_LE(row.estimate.lower_bound, row.sim().step_time) << label;
    if (!unpipelined_only || driver::resolve(s, row.values).parallel.pp == 1) {
      EXPECT_GT(row.estimate.lower_bound, tight * row.sim().step_time) << label;
    }
    ++simulated;
  }
  return simulated;
}

// ZeRO-3 in the bound: every gathering pass waits for its first unit, which holds the chunk's head units
// (the embedding and the untied 128k-vocabulary output layer of Llama 3), and the stage's last pass
// reduce-scatters that first part after its compute. Exhaustive over prefetch and resharding with and
// without a pipeline: the bound below every simulated step and above 0.9 of it (0.91-0.97; without the
// head units and the last reduce-scatter it was 0.79-0.85 of the unpipelined steps).
TEST(Plan, BoundCountsZero3HeadUnitsAndTheLastReduceScatter) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "2"}});
  Overrides sets = {{"model.layers", "4"},
                    {"parallel.tp", "2"},
                    {"parallel.cp", "1"},
                    {"parallel.pp", "[1, 2]"},
                    {"parallel.virtual_stages", "1"},
                    {"parallel.zero", "3"},
                    {"parallel.dp_overlap", "[true, false]"},
                    {"parallel.reshard_after_forward", "[true, false]"},
                    {"training.global_batch", "32"},
                    {"training.micro_batch", "1"},
                    {"training.recompute", "none"}};
  EXPECT_EQ(expect_bounds_below_steps(exhaustive_llama(topo, sets), 0.9), 8);
}

// ZeRO 1/2 with dp_overlap: the step starts with the parameter all-gather in buckets, and the first
// forward's pieces wait for theirs (StepBuilder::add_gathered_forward). Llama 3 8B cut to 4 layers of 512
// tokens with its 128k-vocabulary embedding and output layer, so the gather outlasts the forward: the bound
// below every simulated step, and above 0.9 of the unpipelined ones (0.65-0.68 without the gather).
TEST(Plan, BoundCountsTheOverlappedParameterGather) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "2"}});
  Overrides sets = {{"model.layers", "4"},
                    {"parallel.tp", "1"},
                    {"parallel.cp", "1"},
                    {"parallel.pp", "[1, 2]"},
                    {"parallel.virtual_stages", "1"},
                    {"parallel.zero", "[1, 2]"},
                    {"parallel.dp_overlap", "true"},
                    {"model.seq_len", "512"},
                    {"training.global_batch", "16"},
                    {"training.micro_batch", "[1, 2]"},
                    {"training.recompute", "none"}};
  EXPECT_EQ(expect_bounds_below_steps(exhaustive_llama(topo, sets), 0.9, true), 6);
}

// The all-gather context parallelism's collectives in the bound as the step builder runs them: a pass's
// merged into one phase per chunk pass, whose wires' latency is paid once (the bound had counted it per
// layer and collective, and came out above the steps: 7.580 s against 7.554 s for the full Llama 3 8B with
// tp 2, cp 8, ZeRO-1 without dp_overlap), and beside ZeRO-1's overlapped parameter gather.
TEST(Plan, BoundCountsAllGatherContextParallelismAsTheBuilderMergesIt) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "2"}});
  Overrides sets = {{"parallel.tp", "2"},
                    {"parallel.cp", "8"},
                    {"parallel.pp", "1"},
                    {"parallel.cp_algorithm", "all_gather"},
                    {"parallel.sequence_parallel", "false"},
                    {"parallel.zero", "1"},
                    {"parallel.dp_overlap", "[true, false]"},
                    {"training.global_batch", "8"},
                    {"training.micro_batch", "1"},
                    {"training.recompute", "[none, full]"}};
  EXPECT_EQ(expect_bounds_below_steps(exhaustive_llama(topo, sets), 0.95), 4);
}

// Tensor parallelism's serial collectives in the bound as the step builder's tp_plan runs them: a chunk
// pass's merged into one phase, whose wires' latency is paid once. Counted per layer and collective (as the
// bound did), the wires across two servers came out above the step: 0.350979 s against 0.348914 s for tp 16
// with full recomputation (Llama 3 8B cut to 16 layers of 1024 tokens, hidden 2048, 16 KV heads).
TEST(Plan, BoundCountsTensorParallelismAsTheBuilderMergesIt) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "2"}});
  Overrides sets = {{"model.layers", "16"},
                    {"model.seq_len", "1024"},
                    {"model.hidden", "2048"},
                    {"model.kv_heads", "16"},
                    {"model.ffn_hidden", "8192"},
                    {"parallel.tp", "16"},
                    {"parallel.cp", "1"},
                    {"parallel.pp", "1"},
                    {"parallel.sequence_parallel", "false"},
                    {"parallel.tp_overlap", "false"},
                    {"parallel.zero", "0"},
                    {"training.global_batch", "32"},
                    {"training.micro_batch", "1"},
                    {"training.recompute", "[none, full]"}};
  EXPECT_EQ(expect_bounds_below_steps(exhaustive_llama(topo, sets), 0.95), 2);
}

// The expert-parallel dispatch in the bound as the step builder's ep_phase_plan runs it: a chunk pass's
// dispatches and combines merged into one phase, whose wires' latency is paid once. Counted per layer (as
// the bound did), the wires across two servers put the bound above the step for 4 of these 8 candidates
// (a small MoE of 32 layers: Mixtral's shape cut to hidden 1024, 16 experts of 1024, 256 tokens); in a
// wider search of it, 10 of 216 by up to 1.4%, two of them among its 20 best.
TEST(Plan, BoundCountsExpertDispatchAsTheBuilderMergesIt) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "2"}});
  Overrides sets = {{"model.seq_len", "256"},
                    {"model.hidden", "1024"},
                    {"model.ffn_hidden", "1024"},
                    {"moe.ffn_hidden", "1024"},
                    {"moe.experts", "16"},
                    {"moe.dispatcher", "[alltoall, flex]"},
                    {"parallel.tp", "1"},
                    {"parallel.pp", "1"},
                    {"parallel.cp", "1"},
                    {"parallel.ep", "[8, 16]"},
                    {"parallel.zero", "1"},
                    {"parallel.dp_overlap", "false"},
                    {"training.global_batch", "16"},
                    {"training.micro_batch", "1"},
                    {"training.recompute", "[none, full]"}};
  EXPECT_EQ(expect_bounds_below_steps(
                exhaustive_search(topo, source_path("workloads/mixtral-8x7b.yaml"), sets), 0.95),
            8);
}

}  // namespace
}  // namespace podsim
