// Every CSV podsim writes reads back, through podsim's own reader, to exactly the cells that were written,
// whatever the names hold (commas, quotes, line breaks, a leading '#').
#include <gtest/gtest.h>

#include "podsim/core/csv_table.hpp"
#include "podsim/core/csv_writer.hpp"

namespace {

const std::vector<std::string> kNastyNames = {
    "server 0 (GPU 0, its host and SSD)",
    "a \"quoted\" name",
    "\"",
    "two\nlines",
    "windows\r\nline end",
    ",",
    "",
    "# not a comment",
    "  spaces kept  ",
    "donn\xC3\xA9"
    "es",
};

}  // namespace

TEST(CsvWriter, FieldsAreQuotedOnlyWhenNeeded) {
  EXPECT_EQ(podsim::csv_field("plain"), "plain");
  EXPECT_EQ(podsim::csv_field("1.5e+06"), "1.5e+06");
  EXPECT_EQ(podsim::csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(podsim::csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(podsim::csv_field("a\nb"), "\"a\nb\"");
  EXPECT_EQ(podsim::csv_field("a\rb"), "\"a\rb\"");
  EXPECT_EQ(podsim::csv_record({"a", "b,c", ""}), "a,\"b,c\",\n");
  EXPECT_EQ(podsim::csv_record({"#x", "#y"}), "\"#x\",#y\n");
}

TEST(CsvWriter, NastyNamesRoundTripThroughTheReader) {
  std::string text = podsim::csv_record({"name", "value", "note"});
  for (size_t i = 0; i < kNastyNames.size(); ++i)
    text += podsim::csv_record({kNastyNames[i], std::to_string(i), kNastyNames[kNastyNames.size() - 1 - i]});
  auto table = podsim::parse_csv(text, "nasty.csv");
  ASSERT_EQ(table.columns, (std::vector<std::string>{"name", "value", "note"}));
  ASSERT_EQ(table.rows.size(), kNastyNames.size()) << text;
  for (size_t i = 0; i < kNastyNames.size(); ++i) {
    EXPECT_EQ(table.text(i, "name"), kNastyNames[i]) << i;
    EXPECT_EQ(table.number(i, "value"), static_cast<double>(i));
    EXPECT_EQ(table.text(i, "note"), kNastyNames[kNastyNames.size() - 1 - i]) << i;
  }
  EXPECT_TRUE(table.comments.empty());
}

TEST(CsvWriter, OneColumnTablesKeepEmptyAndHashCells) {
  std::string text = podsim::csv_record({"name"});
  for (const auto& name : kNastyNames) text += podsim::csv_record({name});
  auto table = podsim::parse_csv(text, "one.csv");
  ASSERT_EQ(table.rows.size(), kNastyNames.size()) << text;
  for (size_t i = 0; i < kNastyNames.size(); ++i) EXPECT_EQ(table.rows[i][0], kNastyNames[i]) << i;
}
