// Every shipped GPU topology preset with every shipped transformer workload, each at its default size: it
// either runs (ok, or out_of_memory: an answer) or refuses with a clear input error (file:line, field, what
// would be valid). Never a crash, an internal error or an invariant violation. Where the error suggests a
// concrete `--set topology.nodes=N`, that suggestion is tried too and must run.
//
// ~20 s for all 9 x 22 pairs on a loaded 2-core machine (most runs fold to a few stages), one ctest entry per
// preset. The refusals are printed, so the test's log lists what the presets cannot run at default size.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "podsim/core/error.hpp"
#include "podsim/driver/simulation.hpp"
#include "test_helpers.hpp"

namespace podsim {
namespace {

using podsim::testing::source_path;

std::string text_of(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Shipped files of one `kind:` in a folder of the source tree, by name.
std::vector<std::string> files_of_kind(const std::string& dir, const std::string& kind) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(source_path(dir))) {
    if (e.path().extension() != ".yaml") continue;
    if (text_of(e.path()).find("\nkind: " + kind + "\n") != std::string::npos)
      out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A refusal a user can act on: it names where (a file:line or the --set that gave the value) and is not a
// bug report.
void expect_clear(const std::string& what, const std::string& message) {
  EXPECT_FALSE(message.empty()) << what;
  static const std::regex where(R"(\.ya?ml:\d+|--set |--workload|--topology)");
  EXPECT_TRUE(std::regex_search(message, where))
      << what << ": the error names no file:line or flag: " << message;
  for (const char* bug : {"internal error", "this is a bug", "std::", "basic_string"})
    EXPECT_EQ(message.find(bug), std::string::npos) << what << ": " << message;
}

enum class Outcome { ran, out_of_memory, refused };

// Runs one pair; failures other than a clear InputError fail the test (an uncaught exception type, an
// InvariantViolation, a status the CLI does not document).
Outcome run_pair(const std::string& topo, const std::string& work, const std::vector<std::string>& sets,
                 std::string& error) {
  driver::RunRequest req{source_path("topologies/" + topo), source_path("workloads/" + work), sets};
  std::string what = topo + " x " + work;
  try {
    auto r = driver::simulate(req);
    if (r.ok()) {
      EXPECT_GT(r.step_time(), 0) << what;
      return Outcome::ran;
    }
    EXPECT_EQ(r.status, "out_of_memory") << what << ": " << r.status_detail;
    return Outcome::out_of_memory;
  } catch (const InputError& e) {
    error = e.what();
    expect_clear(what, error);
    return Outcome::refused;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": not an input error: " << e.what();
    return Outcome::refused;
  }
}

class PresetsRun : public ::testing::TestWithParam<std::string> {};

TEST_P(PresetsRun, EveryTransformerWorkloadRunsOrIsAClearInputError) {
  const std::string topo = GetParam();
  auto workloads = files_of_kind("workloads", "transformer_lm");
  ASSERT_GE(workloads.size(), 10u);
  int ran = 0, oom = 0, refused = 0;
  static const std::regex suggested(R"(--set topology\.nodes=(\d+))");
  for (const auto& work : workloads) {
    std::string error;
    Outcome o = run_pair(topo, work, {}, error);
    std::smatch m;
    if (o == Outcome::refused && std::regex_search(error, m, suggested)) {
      std::string retry_error;  // the suggestion must lead to a run
      o = run_pair(topo, work, {"topology.nodes=" + m[1].str()}, retry_error);
      EXPECT_NE(o, Outcome::refused) << topo << " x " << work
                                     << " with the suggested --set topology.nodes=" << m[1] << ": "
                                     << retry_error;
    }
    if (o == Outcome::refused) std::cout << "  refused " << work << ": " << error.substr(0, 200) << "\n";
    ran += o == Outcome::ran, oom += o == Outcome::out_of_memory, refused += o == Outcome::refused;
  }
  std::cout << topo << ": " << ran << " ran, " << oom << " out of memory, " << refused << " refused of "
            << workloads.size() << "\n";
}

std::vector<std::string> gpu_presets() {
  return files_of_kind("topologies", "gpu_cluster");
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param.substr(0, info.param.size() - 5);  // without .yaml
  std::replace_if(
      n.begin(), n.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  return n;
}

INSTANTIATE_TEST_SUITE_P(GpuPresets, PresetsRun, ::testing::ValuesIn(gpu_presets()), test_name);

TEST(PresetsRunList, ShipsGpuPresetsAndTransformerWorkloads) {  // the slow suite above has inputs
  EXPECT_GE(gpu_presets().size(), 8u);
  EXPECT_GE(files_of_kind("workloads", "transformer_lm").size(), 10u);
}

}  // namespace
}  // namespace podsim
