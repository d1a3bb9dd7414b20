// GEMM formats (fp8 family), device architecture, per-format GEMM efficiency and the fused attention
// (FlashAttention) kernel cost of the calibration layer.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "podsim/calibration/compute_model.hpp"
#include "podsim/core/error.hpp"
#include "podsim/workload/transformer/transformer_loader.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using calibration::AttentionShape;
using calibration::ComputeModel;
using topology::Precision;

namespace {

calibration::DeviceProfile profile(const std::string& name) {
  return calibration::load_device_profile(podsim::testing::source_path("calibration/profiles/" + name));
}

calibration::DeviceRates h100_rates(const std::string& format, double peak, double bytes) {
  calibration::DeviceRates r{peak, 3350e9, 132, bytes};
  r.format = format;
  r.attention_peak_flops = 989e12;
  return r;
}

// A workload file with training.precision written in it, so that the error names file:line.
std::string workload_with_precision(const std::string& precision) {
  std::string src = podsim::testing::source_path("workloads/gpt3-175b.yaml");
  std::ifstream in(src);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto pos = text.find("precision: fp16");
  EXPECT_NE(pos, std::string::npos);
  text.replace(pos, 15, "precision: " + precision);
  auto path = std::filesystem::path(::testing::TempDir()) / ("precision-" + precision + ".yaml");
  std::ofstream(path) << text;
  return path.string();
}

}  // namespace

TEST(PrecisionFormats, NamesAndBytes) {
  EXPECT_EQ(topology::parse_precision("fp8_block"), Precision::fp8_block);
  EXPECT_EQ(topology::parse_precision("mxfp8"), Precision::mxfp8);
  EXPECT_EQ(topology::parse_precision("nvfp4"), Precision::nvfp4);
  EXPECT_EQ(topology::bytes_per_element(Precision::fp8_block), 1);
  EXPECT_EQ(topology::bytes_per_element(Precision::mxfp8), 1);
  EXPECT_EQ(topology::bytes_per_element(Precision::nvfp4), 0.5);
  EXPECT_THROW(topology::parse_precision("fp6"), std::invalid_argument);
}

TEST(PrecisionFormats, PresetsStateArchitectureAndFormats) {
  auto h100 = podsim::testing::preset("dgx-h100-superpod", {{"nodes", "1"}});
  EXPECT_EQ(h100.device.architecture, topology::Architecture::hopper);
  EXPECT_EQ(h100.device.peak(Precision::fp8_block), 1979e12);
  EXPECT_EQ(h100.device.peak_flops.count(Precision::mxfp8), 0u);  // Hopper has no MX formats
  auto a100 = podsim::testing::preset("dgx-a100-superpod", {{"nodes", "1"}});
  EXPECT_EQ(a100.device.architecture, topology::Architecture::ampere);
  EXPECT_EQ(a100.device.peak_flops.count(Precision::fp8), 0u);
  EXPECT_EQ(podsim::testing::preset("dgx2h-v100").device.architecture, topology::Architecture::volta);
  std::string m = podsim::testing::error_of([] {
    podsim::testing::preset("dgx-h100-superpod", {{"device.architecture", "pascal"}});
  });
  EXPECT_NE(m.find("architecture"), std::string::npos) << m;
  EXPECT_NE(m.find("hopper"), std::string::npos) << m;
}

TEST(PrecisionFormats, FormatTheDeviceLacksIsAnErrorAtFileLine) {
  for (auto [topo_name, precision] :
       {std::pair{"dgx2h-v100", "fp8"}, std::pair{"dgx-h100-superpod", "mxfp8"}}) {
    // 16 DGX H100 = 128 GPUs, one replica of gpt3-175b's tp 8 x pp 16.
    auto topo =
        podsim::testing::preset(topo_name, {{"nodes", topo_name == std::string("dgx2h-v100") ? "8" : "16"}});
    std::string file = workload_with_precision(precision);
    std::string m = podsim::testing::error_of([&] { workload::load_workload(file, {}, topo); });
    EXPECT_NE(m.find(file + ":"), std::string::npos) << m;  // file:line
    EXPECT_NE(m.find("training.precision"), std::string::npos) << m;
    EXPECT_NE(m.find("valid on this device"), std::string::npos) << m;
    EXPECT_NE(m.find("fp16"), std::string::npos) << m;  // a valid format is listed
  }
}

TEST(PrecisionFormats, Fp8GemmRunsAtTheFormatPeakTimesItsEfficiency) {
  auto p = profile("h100-sxm5-80gb.yaml");
  EXPECT_EQ(p.gemm.format_scale("fp8"), 1.0);
  EXPECT_EQ(p.gemm.format_scale("fp8_block"), 0.875);
  EXPECT_EQ(p.gemm.format_scale("bf16"), 1.0);
  calibration::GemmShape big{8192, 8192, 8192};
  double bf16 = ComputeModel(p, h100_rates("bf16", 989e12, 2)).gemm(big).seconds;
  double fp8 = ComputeModel(p, h100_rates("fp8", 1979e12, 1)).gemm(big).seconds;
  double block = ComputeModel(p, h100_rates("fp8_block", 1979e12, 1)).gemm(big).seconds;
  EXPECT_NEAR(bf16 / fp8, 2.0, 0.1);                     // same fraction of a doubled peak
  EXPECT_NEAR(fp8 / block, 0.875, 0.02);                 // block scaling costs 1/0.875 in the main loop
  EXPECT_GE(fp8, 2.0 * 8192.0 * 8192 * 8192 / 1979e12);  // never faster than the datasheet
}

TEST(FusedAttention, CausalFlopsAreHalfPlusTheDiagonalBlocks) {
  ComputeModel cm(profile("h100-sxm5-80gb.yaml"), h100_rates("bf16", 989e12, 2));
  AttentionShape a{16, 4096, 4096, 128, 0, 2, false};
  auto full = cm.fused_attention_forward(a);
  EXPECT_DOUBLE_EQ(full.flops, 4.0 * 16 * 4096 * 4096 * 128);
  a.causal = true;
  auto causal = cm.fused_attention_forward(a);
  double n = 4096 / 128;
  EXPECT_DOUBLE_EQ(causal.flops, full.flops * (n + 1) / (2 * n));
  EXPECT_DOUBLE_EQ(cm.fused_attention_backward(a).flops, 2.5 * causal.flops);  // 5 matmuls vs 2
}

TEST(FusedAttention, TrafficHasNoSequenceSquaredTerm) {
  ComputeModel cm(profile("h100-sxm5-80gb.yaml"), h100_rates("bf16", 989e12, 2));
  AttentionShape a{8, 2048, 2048, 128, 0, 2, true};
  AttentionShape b = a;
  b.q_len = b.kv_len = 4096;
  auto fa = cm.fused_attention_forward(a), fb = cm.fused_attention_forward(b);
  EXPECT_DOUBLE_EQ(fb.bytes, 2 * fa.bytes);  // linear in s
  // Q, K, V, O in bf16 + fp32 logsumexp per row.
  EXPECT_DOUBLE_EQ(fa.bytes, 8 * 2048 * 128 * 2.0 * 4 + 8 * 2048 * 4.0);
  auto ba = cm.fused_attention_backward(a), bb = cm.fused_attention_backward(b);
  EXPECT_DOUBLE_EQ(bb.bytes, 2 * ba.bytes);
  // GQA: fewer KV heads read fewer K/V bytes, same FLOPs.
  AttentionShape g = a;
  g.kv_batch_heads = 1;
  EXPECT_LT(cm.fused_attention_forward(g).bytes, fa.bytes);
  EXPECT_DOUBLE_EQ(cm.fused_attention_forward(g).flops, fa.flops);
}

TEST(FusedAttention, TimeIsBoundedByThePeakAndUsesTheProfileEfficiency) {
  auto p = profile("a100-sxm4-80gb.yaml");
  EXPECT_TRUE(p.attention.available);
  EXPECT_EQ(p.attention.kernel, "FlashAttention-2");
  EXPECT_DOUBLE_EQ(p.attention.forward_efficiency, 0.70);
  EXPECT_DOUBLE_EQ(p.attention.backward_efficiency, 0.55);
  calibration::DeviceRates rates{312e12, 2039e9, 108, 2};
  ComputeModel cm(p, rates);
  AttentionShape a{32, 8192, 8192, 128, 0, 2, true};
  auto f = cm.fused_attention_forward(a);
  auto b = cm.fused_attention_backward(a);
  EXPECT_GE(f.seconds, f.flops / 312e12);
  EXPECT_GE(b.seconds, b.flops / 312e12);
  double expected = f.flops / (312e12 * p.clock_sustain_factor * 0.70) + p.kernel_overhead_s;
  EXPECT_NEAR(f.seconds, expected, 1e-9 * expected);
  // Under fp8 the kernel still runs at the 16-bit peak.
  auto h = profile("h100-sxm5-80gb.yaml");
  auto fp8 = ComputeModel(h, h100_rates("fp8", 1979e12, 1)).fused_attention_forward(a);
  auto bf16 = ComputeModel(h, h100_rates("bf16", 989e12, 2)).fused_attention_forward(a);
  EXPECT_DOUBLE_EQ(fp8.seconds, bf16.seconds);
}

TEST(FusedAttention, ProfileWithoutAttentionSectionIsRefused) {
  auto v100 = profile("v100-sxm3-32gb.yaml");  // no FlashAttention-2 on Volta
  EXPECT_FALSE(v100.attention.available);
  ComputeModel cm(v100, {125e12, 900e9, 80, 2});
  EXPECT_THROW(cm.fused_attention_forward({1, 1024, 1024, 64, 0, 2, true}), std::invalid_argument);
  auto path = std::filesystem::path(::testing::TempDir()) / "bad-attention.yaml";
  std::ofstream(path)
      << "device: X\ngemm: {tiles: [[128, 128]]}\nattention: {kernel: FA2, forward_efficiency: "
         "1.4, backward_efficiency: 0.5}\nprovenance: [{kind: prior, source: test}]\n";
  std::string m = podsim::testing::error_of([&] { calibration::load_device_profile(path.string()); });
  EXPECT_NE(m.find("forward_efficiency"), std::string::npos) << m;
}
