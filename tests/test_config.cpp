// Strict YAML access: every error names file, line, column and field and says what is valid.
#include <gtest/gtest.h>

#include "podsim/core/config_node.hpp"
#include "podsim/core/csv_table.hpp"
#include "podsim/core/error.hpp"
#include "podsim/core/text_input.hpp"

using podsim::ConfigNode;
using podsim::InputError;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(ConfigNode, SyntaxErrorNamesLineAndColumn) {
  std::string msg = error_of([] { ConfigNode::load_string("a: 1\nb: [1, 2\nc: 3\n", "bad.yaml"); });
  EXPECT_NE(msg.find("bad.yaml:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("YAML syntax error"), std::string::npos) << msg;
}

TEST(ConfigNode, UnknownKeyIsRejectedWithSuggestion) {
  auto root = ConfigNode::load_string("model:\n  layers: 4\n  hiden: 8\n", "w.yaml");
  auto model = root.child("model");
  model.positive_integer("layers");
  model.positive_integer_or("hidden", 1);
  std::string msg = error_of([&] { model.reject_unknown_keys(); });
  EXPECT_NE(msg.find("w.yaml:3:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown key 'hiden'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean 'hidden'"), std::string::npos) << msg;
}

TEST(ConfigNode, WrongTypeNamesFieldAndValue) {
  auto root = ConfigNode::load_string("parallel:\n  tp: eight\n", "w.yaml");
  std::string msg = error_of([&] { root.child("parallel").positive_integer("tp"); });
  EXPECT_NE(msg.find("w.yaml:2:7: parallel.tp"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'eight'"), std::string::npos) << msg;
}

TEST(ConfigNode, RangeAndChoiceErrors) {
  auto root = ConfigNode::load_string("a: -3\nb: 0.5\nc: sideways\nd: 1.5\n", "x.yaml");
  EXPECT_NE(error_of([&] { root.positive_integer("a"); }).find("at least 1"), std::string::npos);
  EXPECT_NE(error_of([&] { root.positive_integer("b"); }).find("whole number"), std::string::npos);
  EXPECT_NE(error_of([&] {
              root.choice("c", {"up", "down"});
            }).find("not one of: up, down"),
            std::string::npos);
  EXPECT_NE(error_of([&] { root.fraction_or("d", 1); }).find("(0, 1]"), std::string::npos);
  EXPECT_EQ(root.positive_integer_or_auto("e", 7), 7);
}

TEST(ConfigNode, OverridesReplaceValuesAndAreBlamedInErrors) {
  auto root = ConfigNode::load_string("parallel:\n  pp: 2\n", "w.yaml");
  root.apply_override("parallel.pp", "16", "--set workload.parallel.pp=16");
  EXPECT_EQ(root.child("parallel").positive_integer("pp"), 16);
  root.apply_override("parallel.tp", "zero", "--set workload.parallel.tp=zero");
  std::string msg = error_of([&] { root.child("parallel").positive_integer("tp"); });
  EXPECT_NE(msg.find("--set workload.parallel.tp=zero"), std::string::npos) << msg;
  EXPECT_THROW(root.apply_override("parallel.pp.x", "1", "--set workload.parallel.pp.x=1"), InputError);
  EXPECT_THROW(podsim::split_assignment("novalue"), InputError);
}

TEST(CsvTable, CommentsHeaderRowsAndErrors) {
  auto t = podsim::parse_csv("# source: paper\na,b\n1,2\n3,x\n", "t.csv");
  EXPECT_EQ(t.comments.size(), 1u);
  EXPECT_EQ(t.rows.size(), 2u);
  EXPECT_DOUBLE_EQ(t.number(0, "b"), 2);
  std::string msg = error_of([&] { t.number(1, "b"); });
  EXPECT_NE(msg.find("t.csv:4"), std::string::npos) << msg;
  EXPECT_THROW(podsim::parse_csv("a,b\n1\n", "t.csv"), InputError);
  EXPECT_THROW(podsim::parse_csv("a,b\n\"1,2\n", "t.csv"), InputError);
  EXPECT_THROW(t.number(0, "c"), InputError);
}

TEST(TextInput, NumberedLinesDropLineEnds) {
  auto lines = podsim::numbered_lines("a\r\n\nb");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].number, 1);
  EXPECT_EQ(lines[0].text, "a");
  EXPECT_EQ(lines[1].text, "");
  EXPECT_EQ(lines[2].number, 3);
  EXPECT_EQ(lines[2].text, "b");
  EXPECT_TRUE(podsim::numbered_lines("").empty());
}

TEST(TextInput, ParseFiniteNumberNeedsTheWholeText) {
  EXPECT_EQ(podsim::parse_finite_number("2.5e3"), 2500.0);
  EXPECT_EQ(podsim::parse_finite_number("-1"), -1.0);
  for (const char* bad : {"", "12abc", "x", "inf", "nan", "1e999"})
    EXPECT_FALSE(podsim::parse_finite_number(bad).has_value()) << bad;
}
