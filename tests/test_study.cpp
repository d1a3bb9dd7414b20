// Study files, filter expressions and results tables.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "podsim/core/error.hpp"
#include "podsim/study/expression.hpp"
#include "podsim/study/results.hpp"
#include "podsim/study/study.hpp"
#include "study_test_helpers.hpp"

using namespace podsim;
using namespace podsim::study;
using namespace podsim::study::test_support;

TEST(Expression, ArithmeticComparisonsAndLogic) {
  std::map<std::string, std::string> v = {{"a.b", "4"}, {"c", "8"}, {"name", "dgx"}};
  EXPECT_TRUE(Expression::parse("a.b * 2 == c").evaluate(v));
  EXPECT_TRUE(Expression::parse("a.b < c and not (c % 3 == 0)").evaluate(v));
  EXPECT_TRUE(Expression::parse("name == 'dgx' or c > 100").evaluate(v));
  EXPECT_FALSE(Expression::parse("-a.b + 1 > 0").evaluate(v));
  EXPECT_THROW(Expression::parse("a.b *"), std::invalid_argument);
  EXPECT_THROW(Expression::parse("(a.b"), std::invalid_argument);
  EXPECT_THROW(Expression::parse("missing > 1").evaluate(v), std::invalid_argument);
}

TEST(Study, ExpandsZipTimesGridAndAppliesFilters) {
  auto dir = temp_dir("expand");
  auto s = load_study(write(dir, "s.yaml", kStudy));
  ASSERT_EQ(s.points.size(), 6u);  // 3 zipped x 2 crossed
  EXPECT_EQ(s.axis_keys, (std::vector<std::string>{"topology.nodes", "workload.training.global_batch",
                                                   "workload.parallel.pp"}));
  EXPECT_EQ(s.points[1].values.at("topology.nodes"), "1");
  EXPECT_EQ(s.points[1].values.at("workload.parallel.pp"), "4");
  EXPECT_EQ(s.points[1].skipped, "filter: workload.parallel.pp <= topology.nodes * 2");  // 4 > 1 * 2
  EXPECT_TRUE(s.points[0].skipped.empty());
  EXPECT_EQ(s.points[0].sets.front().key, "workload.parallel.virtual_stages");
  EXPECT_EQ(s.points[0].topology_file, fs::path(dir + "/t.yaml").lexically_normal().string());
  // Ids are stable and distinct.
  auto again = load_study(dir + "/s.yaml");
  std::set<std::string> ids;
  for (size_t i = 0; i < s.points.size(); ++i) {
    EXPECT_EQ(s.points[i].id, again.points[i].id);
    ids.insert(s.points[i].id);
  }
  EXPECT_EQ(ids.size(), s.points.size());
}

TEST(Study, RangesAndFileAxes) {
  auto dir = temp_dir("range");
  auto s = load_study(write(dir, "s.yaml", R"(name: r
workload: w.yaml
axes:
  - grid: {topology: [a.yaml, b.yaml]}
  - range: {key: topology.nodes, from: 8, to: 64, times: 2}
)"));
  ASSERT_EQ(s.points.size(), 8u);
  EXPECT_EQ(s.axis_keys.front(), "topology_file");
  EXPECT_EQ(s.points[3].values.at("topology.nodes"), "64");
  EXPECT_NE(s.points[4].topology_file.find("b.yaml"), std::string::npos);
  auto step = load_study(write(dir, "t.yaml",
                               "name: t\ntopology: a.yaml\nworkload: w.yaml\naxes:\n  - range: {key: "
                               "workload.training.global_batch, from: 10, to: 30, step: 10}\n"));
  EXPECT_EQ(step.points.size(), 3u);
}

TEST(Study, NamedCases) {
  auto dir = temp_dir("cases");
  auto s = load_study(write(dir, "s.yaml", R"(name: c
topology: a.yaml
workload: w.yaml
axes:
  - cases:
      - {name: base}
      - {name: deep, set: {workload.parallel.pp: 16, topology: b.yaml}}
  - grid: {topology.nodes: [8, 16]}
)"));
  ASSERT_EQ(s.points.size(), 4u);
  EXPECT_EQ(s.axis_keys, (std::vector<std::string>{"case", "topology.nodes"}));
  EXPECT_EQ(s.points[2].values.at("case"), "deep");
  EXPECT_NE(s.points[2].topology_file.find("b.yaml"), std::string::npos);
  EXPECT_EQ(s.points[2].sets.front().key, "workload.parallel.pp");
  EXPECT_NE(s.points[0].topology_file.find("a.yaml"), std::string::npos);
}

TEST(Study, BadStudiesNameTheProblem) {
  auto dir = temp_dir("bad");
  auto message = [&](const std::string& text) {
    try {
      load_study(write(dir, "bad.yaml", text));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  std::string head = "name: b\ntopology: t.yaml\nworkload: w.yaml\n";
  EXPECT_NE(message(head + "axes:\n  - zip: {topology.nodes: [1, 2], workload.training.global_batch: [8]}\n")
                .find("same length"),
            std::string::npos);
  EXPECT_NE(message(head + "axes:\n  - cube: {topology.nodes: [1]}\n").find("unknown axis kind"),
            std::string::npos);
  EXPECT_NE(message(head + "axes:\n  - grid: {nodes: [1]}\n").find("axis keys are"), std::string::npos);
  EXPECT_NE(
      message(head + "axes:\n  - range: {key: topology.nodes, from: 8, to: 4, times: 2}\n").find("empty"),
      std::string::npos);
  EXPECT_NE(
      message(head + "axes:\n  - range: {key: topology.nodes, from: 1, to: 4}\n").find("exactly one of"),
      std::string::npos);
  EXPECT_NE(message(head + "filters: ['topology.nodes >']\n").find("does not parse"), std::string::npos);
  EXPECT_NE(
      message(head + "axes:\n  - grid: {topology.nodes: [1]}\nfilters: ['nodez > 1']\n").find("unknown name"),
      std::string::npos);
  EXPECT_NE(message(head + "axis: []\n").find("unknown key 'axis'"), std::string::npos);
  EXPECT_NE(message("name: x\nworkload: w.yaml\n").find("no topology"), std::string::npos);
  EXPECT_NE(message(head + "axes:\n  - range: {key: topology.nodes, from: 1, to: 1000000, step: 1}\n")
                .find("more than"),
            std::string::npos);
}

TEST(Results, TruncatedLastLineIsIgnoredAndHeaderIsChecked) {
  auto dir = temp_dir("results");
  auto s = load_study(write(dir, "s.yaml", kStudy));
  auto columns = results_columns(s);
  std::string text = header_line(columns) + row_line(unrun_row(s, s.points[0], "ok", "")) + "1,abc,1,8";
  auto path = write(dir, "r.csv", text);
  auto table = read_results(path, columns);
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(table.rows[0].id, s.points[0].id);
  EXPECT_THROW(read_results(path, {"point", "other"}), InputError);
}

TEST(Expression, DeepNestingIsAnErrorNotACrash) {
  // 10,000 nested parentheses used to overflow the stack of the recursive parser (a segfault).
  std::string deep = std::string(10000, '(') + "a" + std::string(10000, ')');
  EXPECT_NE(message_of([&] { Expression::parse(deep); }).find("nested more than 100 levels"),
            std::string::npos);
  std::string nots;
  for (int i = 0; i < 10000; ++i) nots += "not ";
  EXPECT_THROW(Expression::parse(nots + "a"), std::invalid_argument);
  EXPECT_THROW(Expression::parse(std::string(10000, '-') + "1"), std::invalid_argument);
  std::string chain = "a";
  for (int i = 0; i < 10000; ++i) chain += " + a";
  EXPECT_THROW(Expression::parse(chain), std::invalid_argument);
  // Real filters are a few levels deep.
  std::map<std::string, std::string> v = {{"a", "1"}};
  EXPECT_TRUE(Expression::parse(std::string(50, '(') + "a == 1" + std::string(50, ')')).evaluate(v));
}

TEST(Study, RepeatedPointsFilesAndDeepFiltersAreInputErrors) {
  auto dir = temp_dir("repeat");
  std::string head = "name: b\ntopology: t.yaml\nworkload: w.yaml\n";
  auto message = [&](const std::string& text) {
    return message_of([&] { load_study(write(dir, "bad.yaml", text)); });
  };
  // A repeated value ran a point twice and made `podsim merge` fail after sharding.
  std::string m = message(head + "axes:\n  - grid: {topology.nodes: [1, 2, 1]}\n");
  EXPECT_NE(m.find("bad.yaml:5:"), std::string::npos) << m;
  EXPECT_NE(m.find("topology.nodes[2]"), std::string::npos) << m;
  EXPECT_NE(m.find("appears twice"), std::string::npos) << m;
  m = message(head + "axes:\n  - zip: {topology.nodes: [1, 1], workload.training.global_batch: [8, 8]}\n");
  EXPECT_NE(m.find("appears twice"), std::string::npos) << m;
  EXPECT_EQ(
      message(head + "axes:\n  - zip: {topology.nodes: [1, 1], workload.training.global_batch: [8, 16]}\n"),
      "(no error)");
  m = message(head + "axes:\n  - cases: [{name: a}, {name: b}]\n");
  EXPECT_NE(m.find("same values as case 'a'"), std::string::npos) << m;
  m = message(head + "filters: ['" + std::string(500, '(') + "1" + std::string(500, ')') + "']\n");
  EXPECT_NE(m.find("bad.yaml:4:"), std::string::npos) << m;
  EXPECT_NE(m.find("filters[0]"), std::string::npos) << m;
  EXPECT_NE(m.find("nested more than"), std::string::npos) << m;
  // Files that do not exist: named with the line and field of the study that names them.
  auto s = load_study(write(dir, "files.yaml", "name: f\ntopology: t.yaml\nworkload: w.yaml\n"));
  m = message_of([&] { check_files_exist(s); });
  EXPECT_NE(m.find("files.yaml:2:11: topology: t.yaml: no such file"), std::string::npos) << m;
  write(dir, "t.yaml", "");
  m = message_of([&] { check_files_exist(s); });
  EXPECT_NE(m.find("files.yaml:3:11: workload: w.yaml: no such file"), std::string::npos) << m;
  write(dir, "w.yaml", "");
  EXPECT_NO_THROW(check_files_exist(s));
  s = load_study(
      write(dir, "axis.yaml", "name: f\nworkload: w.yaml\naxes:\n  - grid: {topology: [t.yaml, u.yaml]}\n"));
  m = message_of([&] { check_files_exist(s); });
  EXPECT_NE(m.find("axis.yaml:4:"), std::string::npos) << m;
  EXPECT_NE(m.find("u.yaml: no such file"), std::string::npos) << m;
}

TEST(Study, ShippedStudiesLoadAndNameFilesThatExist) {
  int loaded = 0;
  for (const auto& e : fs::directory_iterator(std::string(PODSIM_SOURCE_DIR) + "/workloads/studies")) {
    auto s = load_study(e.path().string());
    EXPECT_NO_THROW(check_files_exist(s)) << e.path();
    loaded++;
  }
  EXPECT_GT(loaded, 3);
}
