// Writes example-gemm.csv and example-memory.csv in this folder: what calib-gemm and calib-memory would
// print on an H200-like GPU whose true parameters are known (below), with +-3% deterministic noise. Test
// and documentation data for `podsim calibrate fit`, never a measurement.
//   cmake --build build --target podsim_make_calib_example && build/tests/podsim_make_calib_example
//   tests/data/calib
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "podsim/calibration/compute_model.hpp"

using namespace podsim::calibration;

int main(int argc, char** argv) {
  std::string dir = argc > 1 ? argv[1] : ".";
  DeviceProfile truth;
  truth.gemm.tiles = {{256, 128}, {128, 256}, {128, 128}, {256, 64},
                      {64, 256},  {128, 64},  {64, 128},  {64, 64}};
  truth.gemm.mainloop_efficiency = 0.82;
  truth.gemm.required_tile_intensity = 64;
  truth.gemm.wave_overhead_s = 1.8e-6;
  truth.kernel_overhead_s = 3.5e-6;
  truth.memory_efficiency = 0.83;
  DeviceRates rates{989e12, 4800e9, 132, 2};
  ComputeModel cm(truth, rates);
  auto noise = [](int i) { return 1 + 0.03 * std::sin(12.9898 * i + 0.5); };
  const char* header =
      "# tool: {}\n# synthetic: example data written by tests/data/calib/make_example.cpp from known "
      "parameters "
      "(mainloop 0.82, tile intensity 64, wave 1.8 us, kernel 3.5 us, memory 0.83) with +-3% noise; not a "
      "measurement\n# device: example H200-like GPU\n# host: none\n# sm_count: 132\n# date: 2026-01-01\n";

  std::string gemm = fmt::format(fmt::runtime(header), "calib-gemm");
  gemm += "shape_class,dtype,m,n,k,batch,median_time_us,min_time_us,achieved_TFLOPs,repeats\n";
  struct Row {
    const char* cls;
    double m, n, k, b;
  };
  std::vector<Row> rows;  // the calib-gemm sweep (calibration/src/calib_gemm.cu)
  for (double s : {1024, 2048, 3072, 4096, 5120, 6144, 8192, 10240, 12288, 16384})
    rows.push_back({"square", s, s, s, 1});
  for (double h : {4096, 5120, 8192, 12288})
    for (double tp : {1, 2, 4, 8}) {
      rows.push_back({"transformer", 4096, 3 * h / tp, h, 1});
      rows.push_back({"transformer", 4096, h, h / tp, 1});
      rows.push_back({"transformer", 4096, 4 * h / tp, h, 1});
      rows.push_back({"transformer", 4096, h, 4 * h / tp, 1});
      if (tp == 8) {
        rows.push_back({"transformer", 3 * h / tp, h, 4096, 1});
        rows.push_back({"transformer", 4 * h / tp, h, 4096, 1});
      }
    }
  for (double m : {16, 64, 128, 256})
    for (double nk : {4096, 12288}) rows.push_back({"skinny", m, nk, nk, 1});
  for (double s : {128, 256, 384, 512, 768, 1024}) rows.push_back({"small", s, s, s, 1});
  for (double heads : {8, 16, 32})
    for (double seq : {1024, 2048, 4096}) {
      rows.push_back({"batched_attention", seq, seq, 128, heads});
      rows.push_back({"batched_attention", seq, 128, seq, heads});
    }
  int i = 0;
  for (const char* dtype : {"bf16", "fp16"})
    for (const auto& r : rows) {
      auto e = cm.gemm({r.m, r.n, r.k, r.b});
      double t = e.seconds * noise(++i);
      gemm += fmt::format("{},{},{},{},{},{},{:.3f},{:.3f},{:.2f},20\n", r.cls, dtype, r.m, r.n, r.k, r.b,
                          t * 1e6, t * 0.99e6, e.flops / t / 1e12);
    }
  double burst = cm.gemm({8192, 8192, 8192}).seconds;
  gemm += fmt::format("burst,bf16,8192,8192,8192,1,{:.3f},{:.3f},0,20\n", burst * 1e6, burst * 1e6);
  gemm += fmt::format("sustained,bf16,8192,8192,8192,1,{:.3f},{:.3f},0,20\n", burst / 0.86 * 1e6,
                      burst / 0.86 * 1e6);

  std::string memory = fmt::format(fmt::runtime(header), "calib-memory");
  memory += "kernel,bytes,elements,median_time_us,min_time_us,achieved_GBps,repeats\n";
  for (const char* kernel : {"copy", "read", "write", "elementwise", "layernorm", "softmax"})
    for (double buffer = 1 << 20; buffer <= 4294967296.0; buffer *= 4) {
      bool stream = kernel[0] == 'c' || kernel[0] == 'r' || kernel[0] == 'w';
      double bytes = std::string(kernel) == "read" || std::string(kernel) == "write" ? buffer : 2 * buffer;
      double t =
          (stream ? bytes / (rates.hbm_bandwidth * 0.9) + truth.kernel_overhead_s : cm.memory_op(bytes)) *
          noise(++i);
      memory += fmt::format("{},{:.0f},{:.0f},{:.3f},{:.3f},{:.1f},20\n", kernel, bytes, bytes / 2, t * 1e6,
                            t * 0.99e6, bytes / t / 1e9);
    }
  for (auto [name, text] : {std::pair{"example-gemm.csv", gemm}, std::pair{"example-memory.csv", memory}}) {
    std::FILE* f = std::fopen((dir + "/" + name).c_str(), "w");
    if (!f) return 1;
    std::fputs(text.c_str(), f);
    std::fclose(f);
  }
  return 0;
}
