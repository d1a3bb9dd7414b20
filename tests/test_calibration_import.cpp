// Reading calibration inputs (nccl-tests logs, calib-gemm / calib-memory CSVs): the published format is
// understood, and bad input gets an error naming the file, the line and what would be valid. Plus the
// nccl-tests import against known answers.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "podsim/calibration/wafer_profile.hpp"
#include "podsim/core/error.hpp"
#include "podsim/fit/collective_geometry.hpp"
#include "podsim/fit/fabric_fit.hpp"
#include "podsim/fit/kernel_measurements.hpp"
#include "podsim/fit/nccl_tests_log.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using podsim::testing::error_of;
using namespace podsim::calibration;

namespace {

std::string data_path(const std::string& name) {
  return podsim::testing::source_path("tests/data/nccl-tests/" + name);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// nccl-tests' number format (src/util.cu getFloatStr): the most decimals that fit the column.
std::string nccl_number(double v, int width) {
  for (int decimals : {2, 1, 0}) {
    auto s = fmt::format("{:{}.{}f}", v, width, decimals);
    if (static_cast<int>(s.size()) <= width) return s;
  }
  return fmt::format("{:{}.1e}", v, width);
}

// An nccl-tests log of `c` on `topo` whose times are podsim's own prediction under `truth`.
std::string synthetic_log(const topology::Topology& topo, const FabricProfile& truth, const char* program,
                          network::Collective c, int hosts, double max_bytes) {
  int n = static_cast<int>(c.group.size());
  std::string out = fmt::format("# Collective test starting: {}\n# Using devices\n", program);
  for (int r = 0; r < n; ++r)
    out += fmt::format(
        "#  Rank {:2d} Group  0 Pid  1000 on {:>10} device {:2d} [0000:07:00] NVIDIA A100-SXM4-80GB\n", r,
        fmt::format("node{}", r * hosts / n), r % (n / hosts));
  out +=
      "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   "
      "algbw   "
      "busbw  #wrong\n";
  double factor = network::bus_factor(c.kind, n);
  for (double bytes = 8; bytes <= max_bytes; bytes *= 2) {
    c.bytes = bytes;
    double t = fit::predicted_collective_time(topo, truth, c) * 1e6;
    double algbw = bytes / t / 1e3;
    std::string body = fmt::format("  {}  {}  {}  {:6d}", nccl_number(t, 7), nccl_number(algbw, 6),
                                   nccl_number(algbw * factor, 6), 0);
    out += fmt::format("{:12.0f}  {:12.0f}  {:>8}  {:>6}  {:>6}{}{}\n", bytes, bytes / 4, "float", "sum", -1,
                       body, body);
  }
  return out;
}

}  // namespace

TEST(CalibNcclTestsLog, ReadsTheCurrentFormat) {
  auto logs = read_nccl_tests_log(data_path("all_reduce_perf.dgx-a100.8gpu.log"));
  ASSERT_EQ(logs.size(), 1u);
  const auto& log = logs[0];
  EXPECT_EQ(log.op, "all_reduce");
  EXPECT_EQ(log.program, "all_reduce_perf");
  EXPECT_EQ(log.ranks, 8);
  EXPECT_EQ(log.nodes, 1);
  EXPECT_EQ(log.device, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(log.version, "nccl-tests 2.13.9, NCCL 2.19.3");
  ASSERT_EQ(log.rows.size(), 31u);  // 8 B .. 8 GiB
  EXPECT_EQ(log.rows.front().bytes, 8);
  EXPECT_NEAR(log.rows.front().seconds, 11.84e-6, 1e-12);
  EXPECT_EQ(log.rows.back().bytes, 8589934592.0);
  EXPECT_NEAR(log.rows.back().busbw, 231.73e9, 1e3);
}

TEST(CalibNcclTestsLog, ReadsTheOlderFormatAndNcclInfoLines) {
  // No version or "test starting" line (the file name says all_gather), Rank lines without Group, NCCL INFO
  // lines between them and the table.
  auto logs = read_nccl_tests_log(data_path("all_gather_perf.dgx-a100.8gpu.log"));
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(logs[0].op, "all_gather");
  EXPECT_EQ(logs[0].ranks, 8);
  EXPECT_EQ(logs[0].version, "NCCL 2.18.3+cuda12.2");
  EXPECT_EQ(logs[0].rows.size(), 11u);
}

TEST(CalibNcclTestsLog, CountsHostsAcrossNodes) {
  auto logs = read_nccl_tests_log(data_path("all_reduce_perf.dgx-a100.2node.log"));
  EXPECT_EQ(logs[0].ranks, 16);
  EXPECT_EQ(logs[0].nodes, 2);
  EXPECT_EQ(logs[0].hosts, (std::vector<std::string>{"dgx-a1", "dgx-a2"}));
}

TEST(CalibNcclTestsLog, BadLogsGetErrorsNamingFileLineAndFix) {
  std::string good = slurp(data_path("all_reduce_perf.dgx-a100.8gpu.log"));
  auto line_of = [&](const std::string& text, const std::string& start) {
    size_t pos = text.find(start);
    return std::count(text.begin(), text.begin() + pos, '\n') + 1;
  };
  // A truncated row (the log was cut while the test ran).
  std::string truncated = good;
  size_t row = truncated.find("        1024           256");
  truncated.replace(row, truncated.find('\n', row) - row,
                    "        1024           256     float     sum      -1    11.8");
  auto msg = error_of([&] { parse_nccl_tests_log(truncated, "ar.log"); });
  EXPECT_NE(msg.find(fmt::format("ar.log:{}:", line_of(truncated, "        1024           256"))),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
  // Sizes that go down: two runs pasted into one table.
  std::string pasted = good + good.substr(good.find("           8             2"));
  msg = error_of([&] { parse_nccl_tests_log(pasted, "ar.log"); });
  EXPECT_NE(msg.find("does not increase"), std::string::npos) << msg;
  EXPECT_NE(msg.find("ar.log:"), std::string::npos) << msg;
  // No Rank lines: the number of GPUs is unknown.
  std::string no_ranks;
  std::istringstream in(good);
  for (std::string l; std::getline(in, l);)
    if (l.find("#  Rank") != 0) no_ranks += l + "\n";
  msg = error_of([&] { parse_nccl_tests_log(no_ranks, "ar.log"); });
  EXPECT_NE(msg.find("Rank"), std::string::npos) << msg;
  // A time that is not a number.
  std::string garbled = good;
  garbled.replace(garbled.find("11.84"), 5, "11,84");
  msg = error_of([&] { parse_nccl_tests_log(garbled, "ar.log"); });
  EXPECT_NE(msg.find("time"), std::string::npos) << msg;
  // Not an nccl-tests log at all, and a collective podsim does not model.
  EXPECT_NE(error_of([] { parse_nccl_tests_log("hello\n", "x.log"); }).find("no nccl-tests result table"),
            std::string::npos);
  std::string hypercube = good;
  hypercube.replace(hypercube.find("all_reduce_perf"), 15, "hypercube_perf");
  msg = error_of([&] { parse_nccl_tests_log(hypercube, "x.log"); });
  EXPECT_NE(msg.find("--op"), std::string::npos) << msg;
  EXPECT_NE(error_of([] { read_nccl_tests_log("/nonexistent/log"); }).find("cannot open"), std::string::npos);
}

TEST(CalibMeasurementsCsv, BadCsvGetsErrorsNamingFileLineAndColumns) {
  const std::string header = "shape_class,dtype,m,n,k,batch,median_time_us\n";
  auto msg = error_of(
      [] { parse_gemm_measurements("shape_class,dtype,m,n,k,batch\nsquare,bf16,1,1,1,1\n", "g.csv"); });
  EXPECT_NE(msg.find("g.csv: missing column 'median_time_us'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("calib-gemm writes"), std::string::npos) << msg;
  msg = error_of([&] {
    parse_gemm_measurements(header + "square,bf16,1024,1024,1024,1,12.5\nsquare,bf16,2048\n", "g.csv");
  });
  EXPECT_NE(msg.find("g.csv:3:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
  msg = error_of([&] { parse_gemm_measurements(header + "square,bf16,1024,1024,1024,1,-3\n", "g.csv"); });
  EXPECT_NE(msg.find("g.csv:2: column 'median_time_us' must be more than 0"), std::string::npos) << msg;
  msg = error_of([] {
    parse_memory_measurements("kernel,bytes,median_time_us\ncopy,1000,2\ncopy,4000,3\ncopy,2000,2.5\n",
                              "m.csv");
  });
  EXPECT_NE(msg.find("m.csv:4:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("does not increase"), std::string::npos) << msg;
  // Comment lines carry provenance.
  auto ok = parse_memory_measurements(
      "# device: NVIDIA H200\n# sm_count: 132\nkernel,bytes,median_time_us\ncopy,1000,2\n", "m.csv");
  EXPECT_EQ(ok.header.get("device"), "NVIDIA H200");
  EXPECT_EQ(ok.header.get("sm_count"), "132");
}

TEST(CalibFabricFit, GeometryFormulaIsPodsimsNetworkModel) {
  auto topo = podsim::testing::preset("dgx-a100-superpod");
  for (int ranks : {8, 16}) {
    network::Collective c;
    c.kind = network::CollectiveKind::all_reduce;
    for (int r = 0; r < ranks; ++r) c.group.push_back(r);
    auto g = fit::collective_geometry(topo, c);
    EXPECT_EQ(g.bandwidth_class, ranks == 8 ? "nvlink" : "infiniband");
    EXPECT_EQ(g.steps, 2.0 * (ranks - 1));
    for (double bytes : {8.0, 1e6, 1e9}) {
      c.bytes = bytes;
      EXPECT_NEAR(geometry_time(g, bytes, topo.fabric_profile) /
                      fit::predicted_collective_time(topo, topo.fabric_profile, c),
                  1, 1e-9);
    }
  }
}

TEST(CalibFabricFit, RecoversKnownParametersFromLogsOfTheModel) {
  auto topo = podsim::testing::preset("dgx-a100-superpod");
  FabricProfile truth = topo.fabric_profile;
  truth.link_efficiency = {{"nvlink", 0.8}, {"infiniband", 0.9}, {"pcie", 1.0}};
  truth.step_latency = {{"nvlink", 0.45e-6}, {"infiniband", 2.0e-6}, {"pcie", 0.0}};
  truth.launch_latency = 7e-6;
  auto group = [](int n) {
    std::vector<int> g;
    for (int r = 0; r < n; ++r) g.push_back(r);
    return g;
  };
  std::string text =
      synthetic_log(topo, truth, "all_reduce_perf",
                    {network::CollectiveKind::all_reduce, group(8), 0, network::Algorithm::ring}, 1, 8e9) +
      synthetic_log(topo, truth, "all_gather_perf",
                    {network::CollectiveKind::all_gather, group(8), 0, network::Algorithm::ring}, 1, 8e9) +
      synthetic_log(topo, truth, "all_reduce_perf",
                    {network::CollectiveKind::all_reduce, group(16), 0, network::Algorithm::ring}, 2, 8e9);
  auto logs = parse_nccl_tests_log(text, "synthetic.log");
  ASSERT_EQ(logs.size(), 3u);
  std::vector<CollectiveGeometry> geometry;
  for (const auto& log : logs)
    geometry.push_back(fit::collective_geometry(topo, fit::measured_collective(topo, log)));
  FabricProfile base = topo.fabric_profile;  // the fit must move away from these
  auto r = fit_fabric_profile(logs, geometry, base);
  EXPECT_NEAR(r.profile.efficiency("nvlink"), 0.8, 0.002);
  EXPECT_NEAR(r.profile.efficiency("infiniband"), 0.9, 0.002);
  EXPECT_NEAR(r.profile.launch_latency, 7e-6, 0.05e-6);
  EXPECT_NEAR(r.profile.step("nvlink"), 0.45e-6, 0.01e-6);
  EXPECT_NEAR(r.profile.step("infiniband"), 2.0e-6, 0.01e-6);
  for (const auto& c : r.collectives)
    EXPECT_LT(c.model_error.max_abs, 0.01) << c.log->op << " " << c.log->ranks;
  ASSERT_EQ(r.profile.measured.size(), 3u);
  EXPECT_EQ(r.profile.measured[2].bound_by, "infiniband");
  EXPECT_EQ(r.profile.measured[0].ranges.back().bound_by, "nvlink");
  EXPECT_EQ(r.profile.measured[0].ranges.front().bound_by, "latency");
}

TEST(CalibFabricFit, ImportsTheHandWrittenDgxA100Logs) {
  auto topo = podsim::testing::preset("dgx-a100-superpod");
  std::vector<NcclTestsLog> logs;
  for (const char* f : {"all_reduce_perf.dgx-a100.8gpu.log", "all_gather_perf.dgx-a100.8gpu.log",
                        "all_reduce_perf.dgx-a100.2node.log"})
    for (auto& log : read_nccl_tests_log(data_path(f))) logs.push_back(log);
  std::vector<CollectiveGeometry> geometry;
  for (const auto& log : logs)
    geometry.push_back(fit::collective_geometry(topo, fit::measured_collective(topo, log)));
  auto r = fit_fabric_profile(logs, geometry, topo.fabric_profile);
  // The logs were written with large-message busbw 231 (all_reduce) and 226 (all_gather) GB/s on 300 GB/s
  // NVLink3, 189 GB/s on 8 x 25 GB/s HDR rails, and small-message times of 11.8, 8.9 and 24 us.
  EXPECT_NEAR(r.collectives[0].efficiency, 231.0 / 300, 0.01);
  EXPECT_NEAR(r.collectives[1].efficiency, 226.0 / 300, 0.01);
  EXPECT_NEAR(r.profile.efficiency("nvlink"), (231.0 + 226.0) / 600, 0.01);
  EXPECT_NEAR(r.profile.efficiency("infiniband"), 189.0 / 200, 0.01);
  EXPECT_NEAR(r.collectives[0].latency, 11.8e-6, 0.3e-6);
  EXPECT_EQ(r.collectives[2].geometry.bandwidth_class, "infiniband");
  // podsim's model is one latency and one bandwidth per link class: good at both ends of the size range.
  EXPECT_LT(r.collectives[0].ranges.front().model_error.mean_abs, 0.1);
  EXPECT_LT(r.collectives[0].ranges.back().model_error.mean_abs, 0.1);
}

TEST(CalibFabricFit, LogsThatDoNotFitTheTopologyAreRejected) {
  auto topo = podsim::testing::preset("dgx-a100-superpod");
  auto logs = read_nccl_tests_log(data_path("all_reduce_perf.dgx-a100.2node.log"));
  auto msg = error_of([&] {
    fit::measured_collective(podsim::testing::preset("dgx-a100-superpod", {{"nodes", "1"}}), logs[0]);
  });
  EXPECT_NE(msg.find("topology.nodes=2"), std::string::npos) << msg;
  logs[0].ranks = 15;
  msg = error_of([&] { fit::measured_collective(topo, logs[0]); });
  EXPECT_NE(msg.find("same number"), std::string::npos) << msg;
}

TEST(CalibProfiles, EveryShippedProfileLoads) {
  namespace fs = std::filesystem;
  int n = 0;
  for (const auto& entry : fs::directory_iterator(podsim::testing::source_path("calibration/profiles"))) {
    std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".yaml") continue;
    // Three kinds of profile, told apart by their content: fabric (link_efficiency), wafer (gemm_efficiency
    // of a wafer-scale device) and GPU/TPU/CPU device (a gemm section).
    std::ifstream in(entry.path());
    std::string text((std::istreambuf_iterator<char>(in)), {});
    if (text.find("\nlink_efficiency:") != std::string::npos)
      EXPECT_NO_THROW(load_fabric_profile(entry.path().string())) << name;
    else if (text.find("\ngemm_efficiency:") != std::string::npos)
      EXPECT_NO_THROW(load_wafer_profile(entry.path().string())) << name;
    else
      EXPECT_NO_THROW(load_device_profile(entry.path().string())) << name;
    ++n;
  }
  EXPECT_GE(n, 6);
}

TEST(CalibNcclTestsLog, ReadsCalibNcclCsv) {
  std::string csv =
      "# tool: calib-nccl\n# device: NVIDIA H200\n# hosts: h200-a\n# nccl: 2.28.3\n"
      "op,ranks,nodes,bytes,median_time_us,algbw_GBps,busbw_GBps,iterations\n"
      "all_reduce,8,1,8,10.5,0,0,5\nall_reduce,8,1,16,10.6,0,0,5\nall_gather,8,1,64,9.1,0,0,5\n";
  ASSERT_TRUE(is_calib_nccl_csv(csv));
  EXPECT_FALSE(is_calib_nccl_csv(slurp(data_path("all_reduce_perf.dgx-a100.8gpu.log"))));
  auto logs = parse_calib_nccl_csv(csv, "n.csv");
  ASSERT_EQ(logs.size(), 2u);
  EXPECT_EQ(logs[0].op, "all_reduce");
  EXPECT_EQ(logs[0].rows.size(), 2u);
  EXPECT_NEAR(logs[0].rows[1].seconds, 10.6e-6, 1e-12);
  EXPECT_EQ(logs[1].op, "all_gather");
  EXPECT_EQ(logs[0].version, "NCCL 2.28.3");
  EXPECT_EQ(logs[0].hosts, std::vector<std::string>{"h200-a"});
  auto msg = error_of([&] { parse_calib_nccl_csv(csv + "all_gather,8,1,32,8,0,0,5\n", "n.csv"); });
  EXPECT_NE(msg.find("n.csv:9:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("does not increase"), std::string::npos) << msg;
}
