// The names tables: to_string, parsing and the valid-value lists all come from one table per enum.
#include <gtest/gtest.h>

#include <stdexcept>

#include "podsim/core/names.hpp"
#include "podsim/network/collective.hpp"
#include "podsim/network/collective_registry.hpp"
#include "podsim/plan/task_graph.hpp"
#include "podsim/topology/topology.hpp"
#include "podsim/workload/pipeline_schedule.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"
#include "podsim/workload/wafer/cerebras_config.hpp"

namespace podsim {
namespace {

enum class Color { red, green, count };
constexpr auto kColorNames = name_table<Color>({{Color::red, "red"}, {Color::green, "green"}});

TEST(Names, NameParseAndValidListComeFromOneTable) {
  static_assert(kColorNames.parse("green") == Color::green);
  EXPECT_STREQ(kColorNames.name(Color::red), "red");
  EXPECT_STREQ(kColorNames.name(Color::count), "?");
  EXPECT_FALSE(kColorNames.parse("blue"));
  EXPECT_EQ(kColorNames.valid_list(), "red, green");
  EXPECT_EQ(kColorNames.names({Color::green}), std::vector<std::string>{"green"});
  try {
    kColorNames.parse_or_throw("blue", "color");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown color 'blue' (valid: red, green)");
  }
}

// Every name of every table parses back to its value, and names are unique.
template <class E, std::size_t N>
void expect_round_trip(const NameTable<E, N>& table) {
  for (const auto& e : table.entries) EXPECT_EQ(table.parse(e.name), e.value) << e.name;
}

TEST(Names, EveryTableRoundTrips) {
  expect_round_trip(plan::kCategoryNames);
  expect_round_trip(plan::kTaskKindNames);
  expect_round_trip(network::kCollectiveKindNames);
  expect_round_trip(topology::kLinkClassNames);
  expect_round_trip(topology::kPrecisionNames);
  expect_round_trip(workload::kExecutionModeNames);
  expect_round_trip(workload::kRecomputeNames);
  expect_round_trip(workload::kGradAccumulationNames);
  expect_round_trip(workload::kScheduleNames);
  EXPECT_STREQ(workload::to_string(workload::Schedule::one_f_one_b), "1f1b");
  EXPECT_STREQ(plan::to_string(plan::TaskKind::call_done), "call done");
}

TEST(Names, ErrorsListTheTablesValues) {
  EXPECT_THROW(topology::parse_precision("fp4"), std::invalid_argument);
  try {
    topology::parse_link_class("token_ring");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "unknown link class 'token_ring' (valid: nvlink, pcie, infiniband, ethernet, ici, "
                 "wafer_mesh, fabric)");
  }
}

TEST(CollectiveRegistry, NamesKindsAndPlanners) {
  for (const auto& a : network::collective_algorithms()) {
    EXPECT_EQ(network::parse_algorithm(a.name), a.algorithm);
    EXPECT_STREQ(network::to_string(a.algorithm), a.name);
    for (auto kind : a.kinds) EXPECT_EQ(network::planner_for(kind, a.algorithm), a.plan);
  }
  EXPECT_EQ(network::algorithm_names(network::CollectiveKind::all_reduce),
            (std::vector<std::string>{"ring", "tree", "hierarchical", "nvls", "nvls_tree", "collnet_direct",
                                      "auto"}));
  EXPECT_EQ(network::algorithm_names(network::CollectiveKind::all_gather),
            (std::vector<std::string>{"ring", "pat", "auto"}));
  // An algorithm that does not plan a kind falls back to the kind's default.
  EXPECT_EQ(network::planner_for(network::CollectiveKind::all_gather, network::Algorithm::tree),
            network::planner_for(network::CollectiveKind::all_gather, network::Algorithm::ring));
  try {
    network::parse_algorithm("butterfly");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(
        e.what(),
        "unknown algorithm 'butterfly' (valid: ring, tree, hierarchical, direct, nvls, nvls_tree, pat, "
        "collnet_direct, auto)");
  }
}

}  // namespace
}  // namespace podsim
