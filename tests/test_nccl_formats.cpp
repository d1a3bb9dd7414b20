// nccl-tests output as clusters hand it over: behind `srun -l` / `mpirun --tag-output` prefixes, and as
// nccl-tests' JSON file (-J, format of github NVIDIA/nccl-tests @ a0b82b2 src/util.cu); and the warning
// when a log's GPUs or hosts do not match the topology it is fitted to.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "podsim/fit/nccl_import.hpp"
#include "podsim/fit/nccl_tests_log.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::calibration;
using podsim::testing::error_of;

namespace {

std::string log_text() {
  std::ifstream in(podsim::testing::source_path("tests/data/nccl-tests/all_reduce_perf.dgx-a100.8gpu.log"));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string prefixed(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) out += prefix + line + "\n";
  return out;
}

void expect_same(const std::vector<NcclTestsLog>& got, const std::vector<NcclTestsLog>& want) {
  ASSERT_EQ(got.size(), want.size());
  EXPECT_EQ(got[0].ranks, want[0].ranks);
  EXPECT_EQ(got[0].nodes, want[0].nodes);
  EXPECT_EQ(got[0].device, want[0].device);
  ASSERT_EQ(got[0].rows.size(), want[0].rows.size());
  for (size_t i = 0; i < got[0].rows.size(); ++i) {
    EXPECT_EQ(got[0].rows[i].bytes, want[0].rows[i].bytes);
    EXPECT_EQ(got[0].rows[i].seconds, want[0].rows[i].seconds);
  }
}

}  // namespace

TEST(NcclFormats, LauncherPrefixesAreStripped) {
  auto plain = parse_nccl_tests_log(log_text(), "all_reduce_perf.log");
  // srun -l: task 0's lines, and another task's NCCL lines and a stray table of its own that must not mix in.
  std::string srun = prefixed(log_text(), "0: ") + "1: dgx-a2:1:1 [0] NCCL INFO Bootstrap\n" +
                     "1: #       size  count  type  redop  root  time  algbw  busbw  #wrong\n" +
                     "1:         1024    256  float  sum    -1   9.0   0.1    0.1    0\n";
  expect_same(parse_nccl_tests_log(srun, "all_reduce_perf.log"), plain);
  expect_same(parse_nccl_tests_log(prefixed(log_text(), "  0: "), "all_reduce_perf.log"), plain);
  expect_same(parse_nccl_tests_log(prefixed(log_text(), "[1,0]<stdout>:"), "all_reduce_perf.log"), plain);
}

TEST(NcclFormats, JsonOutput) {
  std::string json = R"({"version": 3, "start_time": "2026-07-01 10:00:00",
    "args": ["./build/all_gather_perf", "-b", "1K", "-e", "1G", "-f", "4", "-g", "1", "-J", "ag.json"],
    "env": [], "nccl_version": 22703,
    "config": {"nthreads": 1, "ngpus": 1, "minimum_bytes": 1024, "maximum_bytes": 1073741824,
      "devices": [
        {"rank": 0, "group": 0, "pid": 1, "hostname": "node1", "device": 0, "device_hex": "0000:07:00", "device_info": "NVIDIA H100 80GB HBM3"},
        {"rank": 1, "group": 0, "pid": 2, "hostname": "node2", "device": 0, "device_hex": "0000:07:00", "device_info": "NVIDIA H100 80GB HBM3"}]},
    "results": [
      {"size": 1024, "count": 256, "type": "float", "redop": "none", "root": "    -1",
       "out_of_place": {"time": 12.5, "alg_bw": 0.08, "bus_bw": 0.04, "nwrong": 0},
       "in_place": {"time": 12.0, "alg_bw": 0.09, "bus_bw": 0.04, "nwrong": 0}, "actual_iterations": 20, "experiment_name": "x"},
      {"size": 4096, "count": 1024, "type": "float", "redop": "none", "root": "    -1",
       "out_of_place": {"time": 13.0, "alg_bw": 0.3, "bus_bw": 0.15, "nwrong": 0}, "in_place": null}],
    "out_of_bounds": {"count": 0, "okay": true}})";
  ASSERT_TRUE(is_nccl_tests_json(json));
  auto logs = parse_nccl_tests_json(json, "ag.json");
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(logs[0].op, "all_gather");
  EXPECT_EQ(logs[0].program, "all_gather_perf");
  EXPECT_EQ(logs[0].ranks, 2);
  EXPECT_EQ(logs[0].nodes, 2);
  EXPECT_EQ(logs[0].device, "NVIDIA H100 80GB HBM3");
  EXPECT_NE(logs[0].version.find("NCCL 2.27.3"), std::string::npos);
  ASSERT_EQ(logs[0].rows.size(), 2u);
  EXPECT_DOUBLE_EQ(logs[0].rows[1].seconds, 13.0e-6);
  EXPECT_DOUBLE_EQ(logs[0].rows[1].bytes, 4096);
  EXPECT_NE(
      error_of([] { parse_nccl_tests_json(R"({"args": ["reduce_perf"]})", "r.json"); }).find("pass --op"),
      std::string::npos);
  EXPECT_NE(error_of([] {
              parse_nccl_tests_json(R"({"args": ["all_reduce_perf"], "config": {"devices": []}})", "r.json");
            }).find("config.devices lists no GPUs"),
            std::string::npos);
}

TEST(NcclFormats, CountMismatchWarns) {
  NcclTestsLog log;
  log.file = "a.log";
  log.first_line = 7;
  log.ranks = 4;
  log.nodes = 1;
  log.device = "NVIDIA A100-SXM4-80GB";
  EXPECT_TRUE(fit::log_topology_mismatch(log, "DGX", 1, 4, "A100-SXM4-80GB").empty());
  auto w = fit::log_topology_mismatch(log, "DGX", 2, 8, "H100-SXM5-80GB");
  ASSERT_EQ(w.size(), 3u);
  EXPECT_NE(w[0].find("a.log:7: 4 GPU(s) per host, but a server of DGX has 8"), std::string::npos) << w[0];
  EXPECT_NE(w[1].find("spans 1 host(s), the topology 2 servers"), std::string::npos) << w[1];
  EXPECT_NE(w[2].find("the log's GPU is NVIDIA A100-SXM4-80GB"), std::string::npos) << w[2];
}

TEST(NcclFormats, CountMismatchWarnsOncePerFile) {
  NcclTestsLog a;
  a.file = "a.log";
  a.first_line = 7;
  a.ranks = 4;
  a.nodes = 1;
  a.device = "H100-SXM5-80GB";
  NcclTestsLog a2 = a, b = a;
  a2.first_line = 40;  // a second test of the same run, in the same file
  b.file = "b.log";
  auto w = fit::logs_topology_mismatch({a, a2, a2, b}, "DGX", 1, 8, "H100-SXM5-80GB");
  ASSERT_EQ(w.size(), 2u);  // one per file, the GPU matches, the host count too
  EXPECT_NE(w[0].find("a.log:7: 4 GPU(s) per host"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("also 2 more test(s) of this file"), std::string::npos) << w[0];
  EXPECT_NE(w[1].find("b.log:7: 4 GPU(s) per host"), std::string::npos) << w[1];
  EXPECT_EQ(w[1].find("more test"), std::string::npos) << w[1];
  EXPECT_TRUE(fit::logs_topology_mismatch({a, a2}, "DGX", 1, 4, "H100-SXM5-80GB").empty());
}
