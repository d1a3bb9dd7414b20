// The journal of an interrupted plan search (driver/plan_journal.hpp): --resume recalls what was simulated,
// drops a torn last line, runs failed candidates again, and refuses the journal of another search.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "plan_test_request.hpp"
#include "podsim/driver/plan.hpp"
#include "podsim/driver/plan_journal.hpp"
#include "test_helpers.hpp"

namespace podsim {
namespace {

namespace fs = std::filesystem;
using testing::error_of;
using testing::source_path;

// Llama 3 8B (a copy of the preset, to edit) on two DGX H100, tp, pp and micro_batch searched.
driver::PlanRequest small_request(const std::string& dir) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(source_path("workloads/llama3-8b.yaml"), dir + "/llama3-8b.yaml");
  return testing::small_plan_request(dir + "/llama3-8b.yaml", dir + "/out");
}

// What an interrupted search leaves: a journal holding the `rows` best of a finished search (the best of
// them as failed), then a torn line.
void leave_journal(const driver::PlanRequest& request, const driver::PlanRun& done, int rows) {
  topology::Topology topo;
  driver::load_plan_space(request, topo);
  driver::PlanJournal journal(request, topo, 0, 1);
  for (int i = 0; i < rows; ++i) {
    const auto& row = done.result.rows[static_cast<size_t>(i)];
    driver::SimOutcome o = row.sim();
    if (i == 0) o.status = "failed";
    o.description += "\xe2\x80";  // cut inside a UTF-8 sequence, as a message at its length limit may be
    journal.record(driver::candidate_label(done.space, row.values), o);
  }
  std::ofstream(journal.path(), std::ios::app) << R"({"candidate": "tp=1 pp=)";
}

TEST(PlanJournal, ResumeRecallsWhatWasSimulatedAndRunsFailedOnesAgain) {
  std::string dir = (fs::temp_directory_path() / "podsim-plan-journal-resume").string();
  auto request = small_request(dir);
  auto whole = driver::run_plan(request);
  ASSERT_GE(whole.result.ranked(), 4);
  EXPECT_EQ(whole.result.recalled, 0);
  EXPECT_FALSE(fs::exists(request.out + "/plan.partial.jsonl"));  // gone once plan.csv is written
  EXPECT_FALSE(fs::exists(request.out + "/plan.lock"));
  leave_journal(request, whole, 3);
  std::string e = error_of([&] { driver::run_plan(request); });
  EXPECT_NE(e.find("--resume continues that search"), std::string::npos) << e;
  request.resume = true;
  auto resumed = driver::run_plan(request);
  // The best ran again (its journaled outcome failed); the next two were recalled. Which candidates beyond
  // the 3 best a search simulates depends on the order outcomes arrive in (recalled ones at once), so only
  // the 3 best are compared.
  EXPECT_EQ(resumed.result.recalled, 2);
  ASSERT_EQ(resumed.result.rows.size(), whole.result.rows.size());
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(resumed.result.rows[i].values, whole.result.rows[i].values) << i;
    EXPECT_DOUBLE_EQ(resumed.result.rows[i].sim().step_time, whole.result.rows[i].sim().step_time) << i;
    EXPECT_EQ(resumed.result.rows[i].sim().hints, whole.result.rows[i].sim().hints) << i;
  }
  EXPECT_FALSE(fs::exists(request.out + "/plan.partial.jsonl"));
  fs::remove_all(dir);
}

TEST(PlanJournal, TheJournalOfAnotherSearchIsRefusedNamingWhatDiffers) {
  std::string dir = (fs::temp_directory_path() / "podsim-plan-journal-other").string();
  auto request = small_request(dir);
  auto whole = driver::run_plan(request);
  leave_journal(request, whole, 2);
  request.resume = true;
  std::ofstream(request.workload_file, std::ios::app) << "# edited\n";
  std::string e = error_of([&] { driver::run_plan(request); });
  EXPECT_NE(e.find("differs from this one in the content of " + request.workload_file + " (edited since)"),
            std::string::npos)
      << e;
  request.sets.push_back("workload.parallel.zero=1");
  e = error_of([&] { driver::run_plan(request); });
  EXPECT_NE(e.find("and the --set list"), std::string::npos) << e;
  auto no_out = small_request(dir);
  no_out.out = "";
  no_out.resume = true;
  e = error_of([&] { driver::run_plan(no_out); });
  EXPECT_NE(e.find("--resume continues the search whose journal is in --out DIR: give --out"),
            std::string::npos)
      << e;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace podsim
