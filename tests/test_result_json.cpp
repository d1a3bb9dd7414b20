// result.json: JSON types for summary.csv's cells, provenance (version, --set, SHA-256 of inputs) and the
// auto-search as rows.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "podsim/core/sha256.hpp"
#include "podsim/core/version.hpp"
#include "podsim/driver/simulation.hpp"
#include "podsim/report/result_json.hpp"
#include "podsim/report/writers.hpp"
#include "test_helpers.hpp"

namespace {

using podsim::report::summary_cell_json;

TEST(ResultJson, SummaryCellsGetJsonTypes) {
  EXPECT_TRUE(summary_cell_json("mfu", "").is_null());
  EXPECT_EQ(summary_cell_json("devices", "1024"), 1024);
  EXPECT_TRUE(summary_cell_json("devices", "1024").is_number_integer());
  EXPECT_DOUBLE_EQ(summary_cell_json("mfu", "0.3814").get<double>(), 0.3814);
  EXPECT_DOUBLE_EQ(summary_cell_json("step_time_s", "1.5e-05").get<double>(), 1.5e-05);
  EXPECT_EQ(summary_cell_json("schedule", "1f1b"), "1f1b");  // not a number: stays text
  EXPECT_EQ(summary_cell_json("topology", "4096"), "4096");  // a name stays a string
  EXPECT_EQ(summary_cell_json("status", "out_of_memory"), "out_of_memory");
  EXPECT_EQ(summary_cell_json("mfu", "nan"), "nan");  // JSON has no NaN
  EXPECT_TRUE(summary_cell_json("sequence_parallel", "true").is_boolean());
  EXPECT_EQ(summary_cell_json("sequence_parallel", "true"), true);
  EXPECT_EQ(summary_cell_json("tp_overlap", "false"), false);
  EXPECT_EQ(summary_cell_json("topology", "true"), "true");  // a name stays a string
}

TEST(ResultJson, Sha256OfKnownText) {  // FIPS 180-2 test vector
  EXPECT_EQ(podsim::sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  std::string path = ::testing::TempDir() + "podsim_sha_abc.txt";
  std::ofstream(path, std::ios::binary) << "abc";
  EXPECT_EQ(podsim::file_sha256(path), podsim::sha256_hex("abc"));
  EXPECT_THROW(podsim::file_sha256(path + ".missing"), podsim::InputError);
}

TEST(ResultJson, UtcTimestampHonoursSourceDateEpoch) {
  ::setenv("SOURCE_DATE_EPOCH", "86400", 1);
  EXPECT_EQ(podsim::utc_timestamp(), "1970-01-02T00:00:00Z");
  ::unsetenv("SOURCE_DATE_EPOCH");
  EXPECT_EQ(podsim::utc_timestamp().size(), 20u);
  EXPECT_FALSE(podsim::version().empty());
}

// A small real run: the summary parses back to summary.csv's values, provenance names every input.
TEST(ResultJson, RunHasNumbersProvenanceAndSearchRows) {
  podsim::driver::RunRequest req{podsim::testing::source_path("topologies/dgx-a100-superpod.yaml"),
                                 podsim::testing::source_path("workloads/gpt3-xl.yaml"),
                                 {"topology.nodes=2", "workload.training.micro_batch=auto"}};
  auto r = podsim::driver::simulate(req);
  ASSERT_TRUE(r.ok()) << r.status_detail;
  auto j = nlohmann::json::parse(podsim::report::result_json(r));
  for (const auto& [column, text] : podsim::report::summary_row(r)) {
    const auto& v = j["summary"][column];
    if (text.empty())
      EXPECT_TRUE(v.is_null()) << column;
    else if (v.is_number())
      EXPECT_EQ(v.get<double>(), std::stod(text)) << column;
    else if (v.is_boolean())
      EXPECT_EQ(v.get<bool>() ? "true" : "false", text) << column;
    else
      EXPECT_EQ(v.get<std::string>(), text) << column;
  }
  EXPECT_TRUE(j["summary"]["step_time_s"].is_number());
  EXPECT_TRUE(j["summary"]["status"].is_string());
  const auto& p = j["provenance"];
  EXPECT_EQ(p["podsim_version"], podsim::version());
  EXPECT_EQ(p["sets"], nlohmann::json(req.sets));
  ASSERT_GE(p["inputs"].size(), 2u);
  EXPECT_EQ(p["inputs"][0]["role"], "topology");
  EXPECT_EQ(p["inputs"][0]["sha256"], podsim::file_sha256(req.topology_file));
  EXPECT_EQ(p["inputs"][1]["sha256"], podsim::file_sha256(req.workload_file));
  ASSERT_GT(j["search"].size(), 1u);
  int chosen = 0;
  for (const auto& row : j["search"]) {
    EXPECT_TRUE(row["candidate"].is_string());
    if (row["status"] == "ok") EXPECT_GT(row["step_time_s"].get<double>(), 0);
    chosen += row["chosen"].get<bool>();
  }
  EXPECT_EQ(chosen, 1);
  EXPECT_EQ(j["search"].size(), j["search_log"].size());
}

}  // namespace
