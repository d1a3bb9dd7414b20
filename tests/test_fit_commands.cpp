// The calibrate commands as library functions (fit/device_calibration.hpp, fit/nccl_import.hpp): what the
// CLI passes through, checked without the binary. tests/calibrate_cli.sh covers the same end to end.
#include <gtest/gtest.h>

#include <memory>
#include <utility>

#include "podsim/core/error.hpp"
#include "podsim/fit/device_calibration.hpp"
#include "podsim/fit/nccl_import.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using podsim::testing::error_of;
using podsim::testing::source_path;

namespace {

fit::DeviceFitRequest example_device_request() {
  fit::DeviceFitRequest req;
  req.gemm_csv = source_path("tests/data/calib/example-gemm.csv");
  req.memory_csv = source_path("tests/data/calib/example-memory.csv");
  req.device = "H200-example";
  return req;
}

}  // namespace

TEST(FitCommands, PeakTflopsInTeraFlops) {
  auto peaks = fit::parse_peak_tflops({"bf16=989", "fp8=1979.5"});
  ASSERT_EQ(peaks.size(), 2u);
  EXPECT_DOUBLE_EQ(peaks.at("bf16"), 989e12);
  EXPECT_DOUBLE_EQ(peaks.at("fp8"), 1979.5e12);
}

// A dtype podsim has no precision for used to get 2-byte operands silently; now it is named as bad input.
TEST(FitCommands, PeakTflopsRejectsUnknownDtype) {
  auto msg = error_of([] { fit::parse_peak_tflops({"int8=1979"}); });
  EXPECT_NE(msg.find("--peak-tflops int8=1979: unknown precision 'int8' (valid: fp32, tf32, fp16, bf16, fp8, "
                     "fp8_block, mxfp8, nvfp4)"),
            std::string::npos)
      << msg;
  msg = error_of([] { fit::parse_peak_tflops({"bf16=-3"}); });
  EXPECT_NE(msg.find("expected DTYPE=TFLOPS"), std::string::npos) << msg;
}

TEST(FitCommands, DeviceFitNeedsDatasheetFacts) {
  auto msg = error_of([] { fit::calibrate_device(example_device_request()); });
  EXPECT_NE(msg.find("calibrate fit needs the datasheet peaks, HBM bandwidth and SM count"),
            std::string::npos)
      << msg;
}

// Without a topology the flags and the CSV header give every fact; the result is named, marked as not a
// measurement (the example data says it is synthetic) and recovers the example's main-loop efficiency.
TEST(FitCommands, DeviceFitFromFlags) {
  auto req = example_device_request();
  req.peak_tflops = {"bf16=989", "fp16=989"};
  req.hbm_GBps = 4800;
  auto c = fit::calibrate_device(req);
  EXPECT_EQ(c.fit.profile.device, "H200-example");
  EXPECT_GT(c.gemm_rows, 0u);
  EXPECT_GT(c.memory_rows, 0u);
  EXPECT_NEAR(c.fit.profile.gemm.mainloop_efficiency, 0.82, 0.01);
  ASSERT_FALSE(c.fit.profile.provenance.empty());
  EXPECT_EQ(c.fit.profile.provenance.front().kind, "prior");
  EXPECT_NE(c.fit.profile.provenance.front().source.find("NOT A MEASUREMENT"), std::string::npos);
  EXPECT_EQ(c.fit.profile.provenance.back().source, "podsim's built-in defaults");
  auto report = fit::device_fit_report(c);
  EXPECT_EQ(report.rfind("podsim calibrate fit: ", 0), 0u) << report;
  EXPECT_NE(report.find("(132 SMs"), std::string::npos) << report;
  EXPECT_NE(report.find("all fitted classes"), std::string::npos) << report;
}

// The fit's per-test results point into the import's own list of tests, so a moved import must still
// report them (a copy is not allowed at all).
TEST(FitCommands, NcclImportReportAfterMove) {
  fit::NcclImportRequest req;
  req.logs = {source_path("tests/data/nccl-tests/all_reduce_perf.dgx-a100.8gpu.log")};
  req.topology = source_path("topologies/dgx-a100-superpod.yaml");
  auto moved = std::make_unique<fit::NcclImport>(fit::import_nccl_tests(req));
  fit::NcclImport import = std::move(*moved);
  moved.reset();
  ASSERT_EQ(import.tests.size(), 1u);
  ASSERT_EQ(import.fit.collectives.size(), 1u);
  EXPECT_EQ(import.fit.collectives.front().log, &import.tests.front());
  auto report = fit::nccl_import_report(import);
  EXPECT_NE(report.find("1 test(s) from 1 log(s)"), std::string::npos) << report;
  EXPECT_NE(report.find("all_reduce 8x (all_reduce_perf.dgx-a100.8gpu.log:"), std::string::npos) << report;
  EXPECT_NE(report.find("link_efficiency.nvlink"), std::string::npos) << report;
  EXPECT_EQ(import.fit.profile.provenance.front().kind, "prior");  // the test log says it is not measured
}
