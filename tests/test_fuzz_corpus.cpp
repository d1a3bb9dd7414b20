// Replays every fuzzing seed and every input the fuzzer ever found (tests/fuzz/corpus,
// tests/fuzz/regressions) through the same entry points, in the normal build: rejections must be clean
// errors, never crashes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "fuzz/entries.hpp"
#include "test_helpers.hpp"

namespace {

void replay_dir(const std::string& target, void (*entry)(const std::string&)) {
  namespace fs = std::filesystem;
  int files = 0;
  for (const char* kind : {"corpus", "regressions"}) {
    fs::path dir = podsim::testing::source_path(std::string("tests/fuzz/") + kind + "/" + target);
    if (!fs::exists(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      std::ifstream in(e.path(), std::ios::binary);
      std::string data((std::istreambuf_iterator<char>(in)), {});
      SCOPED_TRACE(e.path().string());
      EXPECT_NO_THROW(entry(data));
      files++;
    }
  }
  EXPECT_GT(files, 0) << "no corpus for " << target;
}

}  // namespace

TEST(FuzzCorpus, Topology) {
  replay_dir("topology", podsim::fuzz::topology_yaml);
}
TEST(FuzzCorpus, Workload) {
  replay_dir("workload", podsim::fuzz::workload_yaml);
}
TEST(FuzzCorpus, Study) {
  replay_dir("study", podsim::fuzz::study_yaml);
}
TEST(FuzzCorpus, Csv) {
  replay_dir("csv", podsim::fuzz::csv_text);
}
TEST(FuzzCorpus, NcclTestsLog) {
  replay_dir("nccl", podsim::fuzz::nccl_tests_log);
}
TEST(FuzzCorpus, KernelCsv) {
  replay_dir("kernels", podsim::fuzz::kernel_csv);
}
