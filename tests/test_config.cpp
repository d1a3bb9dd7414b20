// Strict YAML access: every error names file, line, column and field and says what is valid.
#include <gtest/gtest.h>

#include "podsim/core/config_node.hpp"
#include "podsim/core/csv_table.hpp"
#include "podsim/core/error.hpp"
#include "podsim/core/text_input.hpp"
#include "test_helpers.hpp"

using podsim::ConfigNode;
using podsim::InputError;

using podsim::testing::error_of;

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

TEST(TextInput, TrimmedDropsOuterSpacesAndTabsOnly) {
  EXPECT_EQ(podsim::trimmed(" \tmoe.overlap = none\t "), "moe.overlap = none");
  EXPECT_EQ(podsim::trimmed(" \t "), "");
  EXPECT_EQ(podsim::trimmed("x\n"), "x\n");  // line ends are the line reader's business
}

TEST(TextInput, ParseFiniteNumberNeedsTheWholeText) {
  EXPECT_EQ(podsim::parse_finite_number("2.5e3"), 2500.0);
  EXPECT_EQ(podsim::parse_finite_number("-1"), -1.0);
  for (const char* bad : {"", "12abc", "x", "inf", "nan", "1e999"})
    EXPECT_FALSE(podsim::parse_finite_number(bad).has_value()) << bad;
}

TEST(ConfigNode, DuplicateKeysAreRejectedNamingBothLines) {
  // yaml-cpp keeps both entries and a lookup sees one: the file would silently say two things.
  std::string msg = error_of([] { ConfigNode::load_string("model:\n  layers: 4\n  layers: 8\n", "w.yaml"); });
  EXPECT_NE(msg.find("w.yaml:3:3: model.layers: duplicate key 'layers' (first given at line 2)"),
            std::string::npos)
      << msg;
  msg = error_of([] { ConfigNode::load_string("axes:\n  - {a: 1, b: 2, a: 3}\n", "s.yaml"); });
  EXPECT_NE(msg.find("s.yaml:2:18: axes[0].a: duplicate key 'a'"), std::string::npos) << msg;
  msg = error_of([] { ConfigNode::load_string("name: x\nname: y\n", "t.yaml"); });
  EXPECT_NE(msg.find("t.yaml:2:1: name: duplicate key"), std::string::npos) << msg;
  // An override whose value is a mapping is checked too; distinct keys are fine.
  auto root = ConfigNode::load_string("a: {b: 1, c: 2}\n", "w.yaml");
  msg = error_of([&] { root.apply_override("a", "{b: 1, b: 2}", "--set workload.a={b: 1, b: 2}"); });
  EXPECT_NE(msg.find("--set workload.a={b: 1, b: 2}: a.b: duplicate key 'b'"), std::string::npos) << msg;
  EXPECT_EQ(root.child("a").positive_integer("c"), 2);
}

TEST(ConfigNode, QuotedNumbersAndBooleansAreText) {
  auto root = ConfigNode::load_string(
      "layers: \"96\"\nhidden: '8'\nsp: \"true\"\nratio: !!str 0.5\nplain: 96\nname: \"96\"\n", "w.yaml");
  std::string msg = error_of([&] { root.positive_integer("layers"); });
  EXPECT_NE(msg.find("w.yaml:1:9: layers: expected a whole number, got the quoted text '96'"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("remove the quotes"), std::string::npos) << msg;
  EXPECT_NE(error_of([&] { root.integer_or("hidden", 1); }).find("remove the quotes"), std::string::npos);
  msg = error_of([&] { root.boolean_or("sp", false); });
  EXPECT_NE(msg.find("w.yaml:3:5: sp: expected true or false, got the quoted text 'true'"), std::string::npos)
      << msg;
  EXPECT_NE(error_of([&] { root.number("ratio"); }).find("quoted text '0.5'"), std::string::npos);
  EXPECT_EQ(root.positive_integer("plain"), 96);
  EXPECT_EQ(root.string("name"), "96");  // text where text is expected is fine
  // The same holds for a --set value the shell passed with its quotes.
  root.apply_override("plain", "'12'", "--set workload.plain='12'");
  msg = error_of([&] { root.positive_integer("plain"); });
  EXPECT_NE(msg.find("--set workload.plain='12' (field plain): expected a whole number, got the quoted text"),
            std::string::npos)
      << msg;
}

TEST(ConfigNode, NonFiniteAndHugeNumbersAreRejected) {
  auto root = ConfigNode::load_string("a: .inf\nb: .nan\nc: -.inf\nd: 1e300\ne: 1e15\nf: 2e15\n", "t.yaml");
  EXPECT_NE(error_of([&] { root.positive("a"); }).find("t.yaml:1:4: a: expected a finite number"),
            std::string::npos);
  EXPECT_NE(error_of([&] { root.number("b"); }).find("expected a finite number"), std::string::npos);
  EXPECT_NE(error_of([&] { root.non_negative_or("c", 0); }).find("expected a finite number"),
            std::string::npos);
  // 1e300 is finite, but times 2^30 (GiB to bytes) it would be infinite memory.
  std::string msg = error_of([&] { root.positive("d"); });
  EXPECT_NE(msg.find("t.yaml:4:4: d: '1e300' is out of range"), std::string::npos) << msg;
  EXPECT_NE(msg.find("1e15"), std::string::npos) << msg;
  EXPECT_DOUBLE_EQ(root.positive("e"), 1e15);
  EXPECT_NE(error_of([&] { root.positive("f"); }).find("out of range"), std::string::npos);
  EXPECT_NE(error_of([&] { root.positive_integer("a"); }).find("whole number"), std::string::npos);
  EXPECT_NE(error_of([&] { root.positive_integer("b"); }).find("whole number"), std::string::npos);
}

TEST(ConfigNode, LoadFileNamesADirectoryOrAMissingFile) {
  std::string dir = ::testing::TempDir();
  std::string msg = error_of([&] { ConfigNode::load_file(dir); });
  EXPECT_NE(msg.find("is a directory, expected a file"), std::string::npos) << msg;
  msg = error_of([] { ConfigNode::load_file("/nonexistent/podsim/w.yaml"); });
  EXPECT_NE(msg.find("/nonexistent/podsim/w.yaml: cannot open file"), std::string::npos) << msg;
  msg = error_of([] { podsim::read_csv("/nonexistent/podsim/t.csv"); });
  EXPECT_NE(msg.find("cannot open file"), std::string::npos) << msg;
}

TEST(CsvTable, QuotedFieldsMaySpanLines) {
  auto t = podsim::parse_csv("# c\r\nname,v\r\n\"a\nb, \"\"c\"\"\",1\r\nplain,2\r\n", "t.csv");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0][0], "a\nb, \"c\"");
  EXPECT_EQ(t.row_lines[0], 3);
  EXPECT_EQ(t.row_lines[1], 5);  // line numbers count the line inside the quoted field
  EXPECT_EQ(t.rows[1][0], "plain");
  std::string msg = error_of([] { podsim::parse_csv("a,b\n1,\"2\n3,4\n", "u.csv"); });
  EXPECT_NE(msg.find("u.csv:2: unterminated quote"), std::string::npos) << msg;
}

TEST(TextInput, Utf8ValidityAndPrintableNames) {
  EXPECT_TRUE(podsim::is_valid_utf8("plain ascii"));
  EXPECT_TRUE(
      podsim::is_valid_utf8("donn\xC3\xA9"
                            "es \xE2\x82\xAC \xF0\x9F\x98\x80"));
  for (const char* bad :
       {"\xFF", "a\x80", "\xC3", "\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xE2\x82"})
    EXPECT_FALSE(podsim::is_valid_utf8(bad)) << podsim::printable(bad);
  EXPECT_EQ(podsim::printable("w\xFF.yaml"), "w\\xFF.yaml");
  EXPECT_EQ(podsim::printable("donn\xC3\xA9"
                              "es"),
            "donn\xC3\xA9"
            "es");
  EXPECT_EQ(podsim::printable("a\tb"), "a\\x09b");
}
