// calib-gemm: cuBLASLt GEMM throughput over the shapes transformer training runs, for podsim's compute
// model (podsim calibrate fit). One CSV row per (shape, dtype): median and minimum time of repeated runs
// after warm-up, and the achieved TFLOP/s. A burst/sustained pair of the same large GEMM (early, and after
// --sustain-seconds of continuous load) gives the clock the chip holds at its power limit.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace {

const char* kUsage =
    "calib-gemm: time cuBLASLt GEMMs over transformer-shaped sweeps and write one CSV row per shape.\n"
    "  --out FILE             CSV to write (default: - = stdout)\n"
    "  --dtypes LIST          bf16,fp16,fp8 (fp8 only on compute capability 8.9+; default all)\n"
    "  --repeats N            timed samples per shape (default 20); the median is reported\n"
    "  --warmup N             untimed launches first (default 5)\n"
    "  --sustain-seconds S    continuous load for the burst/sustained pair (default 30; 0 = skip)\n"
    "  --quick                a small sweep (smoke test, ~10 s)\n"
    "  --device N             GPU index (default 0)\n";

#define CALIB_LT(call)                                                          \
  do {                                                                          \
    cublasStatus_t s_ = (call);                                                 \
    if (s_ != CUBLAS_STATUS_SUCCESS)                                            \
      calib::die(std::string(#call) + " failed: status " + std::to_string(s_)); \
  } while (0)

struct Shape {
  const char* shape_class;
  long m, n, k, batch;
};

// The shapes podsim's compute model must get right (see src/workload/layer_ops.cpp): square GEMMs for the
// peak, the four GEMMs of a transformer layer per tensor-parallel rank (tokens x out x in) with their
// weight-gradient shapes, skinny GEMMs (small micro-batches, decode), small GEMMs (launch and wave
// overheads) and the batched GEMMs of attention (QK^T and softmax x V, one per head).
std::vector<Shape> sweep(bool quick) {
  std::vector<Shape> out;
  for (long s : {1024L, 2048L, 3072L, 4096L, 5120L, 6144L, 8192L, 10240L, 12288L, 16384L})
    if (!quick || s == 2048 || s == 8192) out.push_back({"square", s, s, s, 1});
  const long tokens = 4096;  // micro-batch 2 x sequence 2048
  for (long h : {4096L, 5120L, 8192L, 12288L})
    for (long tp : {1L, 2L, 4L, 8L}) {
      if (quick && (h != 8192 || tp != 8)) continue;
      out.push_back({"transformer", tokens, 3 * h / tp, h, 1});  // QKV
      out.push_back({"transformer", tokens, h, h / tp, 1});      // attention projection
      out.push_back({"transformer", tokens, 4 * h / tp, h, 1});  // fc1
      out.push_back({"transformer", tokens, h, 4 * h / tp, 1});  // fc2
      if (tp == 8) {                                             // weight gradients: K = tokens
        out.push_back({"transformer", 3 * h / tp, h, tokens, 1});
        out.push_back({"transformer", 4 * h / tp, h, tokens, 1});
      }
    }
  for (long m : {16L, 64L, 128L, 256L})
    for (long nk : {4096L, 12288L})
      if (!quick || m == 64) out.push_back({"skinny", m, nk, nk, 1});
  for (long s : {128L, 256L, 384L, 512L, 768L, 1024L})
    if (!quick || s == 256) out.push_back({"small", s, s, s, 1});
  for (long heads : {8L, 16L, 32L})
    for (long seq : {1024L, 2048L, 4096L}) {
      if (quick && (heads != 16 || seq != 2048)) continue;
      out.push_back({"batched_attention", seq, seq, 128, heads});  // Q K^T
      out.push_back({"batched_attention", seq, 128, seq, heads});  // softmax(.) V
    }
  return out;
}

struct Dtype {
  std::string name;
  cudaDataType_t ab, cd;
  size_t ab_bytes, cd_bytes;
};

template <typename T>
__global__ void fill(T* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    unsigned x = static_cast<unsigned>(i) * 2654435761u ^ seed;  // cheap hash: values in [-1, 1)
    x ^= x >> 13, x *= 0x5bd1e995u, x ^= x >> 15;
    p[i] = T(static_cast<float>(x & 0xffff) / 32768.0f - 1.0f);
  }
}

void fill_buffer(void* p, size_t elements, const std::string& type, unsigned seed) {
  if (type == "fp16")
    fill<<<1024, 256>>>(static_cast<__half*>(p), elements, seed);
  else if (type == "bf16")
    fill<<<1024, 256>>>(static_cast<__nv_bfloat16*>(p), elements, seed);
  else
    fill<<<1024, 256>>>(static_cast<__nv_fp8_e4m3*>(p), elements, seed);
  CALIB_CUDA(cudaGetLastError());
}

// One GEMM D = A^T B in cuBLASLt's column-major "TN" layout (the layout fp8 requires; the same for all
// dtypes so they are comparable), with the algorithm the library's heuristic picks first, as frameworks do.
class Gemm {
 public:
  Gemm(cublasLtHandle_t lt, const Dtype& t, const Shape& s, void* a, void* b, void* d, void* workspace,
       size_t workspace_bytes)
      : lt_(lt), a_(a), b_(b), d_(d), workspace_(workspace), workspace_bytes_(workspace_bytes) {
    CALIB_LT(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    CALIB_LT(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    CALIB_LT(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    CALIB_LT(cublasLtMatrixLayoutCreate(&la_, t.ab, s.k, s.m, s.k));
    CALIB_LT(cublasLtMatrixLayoutCreate(&lb_, t.ab, s.k, s.n, s.k));
    CALIB_LT(cublasLtMatrixLayoutCreate(&ld_, t.cd, s.m, s.n, s.m));
    if (s.batch > 1) {
      int count = static_cast<int>(s.batch);
      long long sa = s.m * s.k, sb = s.k * s.n, sd = s.m * s.n;
      for (auto [layout, stride] : {std::pair{la_, sa}, std::pair{lb_, sb}, std::pair{ld_, sd}}) {
        CALIB_LT(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                                  sizeof count));
        CALIB_LT(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                  &stride, sizeof stride));
      }
    }
    cublasLtMatmulPreference_t pref;
    CALIB_LT(cublasLtMatmulPreferenceCreate(&pref));
    CALIB_LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                  &workspace_bytes, sizeof workspace_bytes));
    int found = 0;
    cublasLtMatmulHeuristicResult_t result{};
    cublasStatus_t status =
        cublasLtMatmulAlgoGetHeuristic(lt, desc_, la_, lb_, ld_, ld_, pref, 1, &result, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    ok_ = status == CUBLAS_STATUS_SUCCESS && found > 0;
    if (ok_) algo_ = result.algo;
  }
  ~Gemm() {
    cublasLtMatrixLayoutDestroy(la_);
    cublasLtMatrixLayoutDestroy(lb_);
    cublasLtMatrixLayoutDestroy(ld_);
    cublasLtMatmulDescDestroy(desc_);
  }
  bool ok() const { return ok_; }
  void run(cudaStream_t stream) const {
    const float alpha = 1, beta = 0;
    CALIB_LT(cublasLtMatmul(lt_, desc_, &alpha, a_, la_, b_, lb_, &beta, d_, ld_, d_, ld_, &algo_, workspace_,
                            workspace_bytes_, stream));
  }

 private:
  cublasLtHandle_t lt_;
  cublasLtMatmulDesc_t desc_{};
  cublasLtMatrixLayout_t la_{}, lb_{}, ld_{};
  cublasLtMatmulAlgo_t algo_{};
  bool ok_ = false;
  void *a_, *b_, *d_, *workspace_;
  size_t workspace_bytes_;
};

// Median over `repeats` samples; each sample times enough back-to-back launches to last ~0.2 ms, so
// event overhead does not dominate tiny GEMMs (launch gaps between kernels, which training also pays, do).
calib::Timing time_gemm(const Gemm& g, int warmup, int repeats, cudaStream_t stream) {
  calib::EventTimer timer;
  for (int i = 0; i < warmup; ++i) g.run(stream);
  float ms = timer.milliseconds(stream, [&] { g.run(stream); });
  int inner = std::clamp(static_cast<int>(std::ceil(0.2 / std::max(ms, 1e-4f))), 1, 200);
  std::vector<double> samples;
  for (int r = 0; r < repeats; ++r) {
    ms = timer.milliseconds(stream, [&] {
      for (int i = 0; i < inner; ++i) g.run(stream);
    });
    samples.push_back(ms * 1e-3 / inner);
  }
  return calib::timing_of(samples);
}

}  // namespace

int main(int argc, char** argv) {
  calib::Args args(argc, argv,
                   {{"out", "-"},
                    {"dtypes", "bf16,fp16,fp8"},
                    {"repeats", "20"},
                    {"warmup", "5"},
                    {"sustain-seconds", "30"},
                    {"quick", "off"},
                    {"device", "0"}},
                   kUsage);
  int device = calib::select_device(args);
  auto fields = calib::device_provenance(device);
  fields["cublaslt"] = std::to_string(cublasLtGetVersion());
  cudaDeviceProp prop{};
  CALIB_CUDA(cudaGetDeviceProperties(&prop, device));
  bool has_fp8 = prop.major * 10 + prop.minor >= 89;

  std::vector<Dtype> dtypes;
  for (const auto& name : args.list("dtypes")) {
    if (name == "bf16")
      dtypes.push_back({name, CUDA_R_16BF, CUDA_R_16BF, 2, 2});
    else if (name == "fp16")
      dtypes.push_back({name, CUDA_R_16F, CUDA_R_16F, 2, 2});
    else if (name == "fp8" && has_fp8)
      dtypes.push_back({name, CUDA_R_8F_E4M3, CUDA_R_16BF, 1, 2});
    else if (name == "fp8")
      std::fprintf(stderr, "calib-gemm: %s has no fp8 tensor cores; fp8 skipped\n", prop.name);
    else
      calib::die("--dtypes: unknown dtype '" + name + "' (valid: bf16, fp16, fp8)");
  }
  auto shapes = sweep(args.get("quick") == "on");
  size_t max_a = 0, max_b = 0, max_d = 0;
  for (const auto& s : shapes) {
    max_a = std::max<size_t>(max_a, s.m * s.k * s.batch);
    max_b = std::max<size_t>(max_b, s.k * s.n * s.batch);
    max_d = std::max<size_t>(max_d, s.m * s.n * s.batch);
  }
  void *a, *b, *d, *workspace;
  const size_t workspace_bytes = 32u << 20;
  CALIB_CUDA(cudaMalloc(&a, max_a * 2));
  CALIB_CUDA(cudaMalloc(&b, max_b * 2));
  CALIB_CUDA(cudaMalloc(&d, max_d * 2));
  CALIB_CUDA(cudaMalloc(&workspace, workspace_bytes));
  cublasLtHandle_t lt;
  CALIB_LT(cublasLtCreate(&lt));
  cudaStream_t stream;
  CALIB_CUDA(cudaStreamCreate(&stream));

  FILE* out = calib::open_csv(args.get("out"), "calib-gemm", args.command(), fields);
  std::fprintf(out, "shape_class,dtype,m,n,k,batch,median_time_us,min_time_us,achieved_TFLOPs,repeats\n");
  int warmup = static_cast<int>(args.number("warmup")), repeats = static_cast<int>(args.number("repeats"));
  for (const auto& t : dtypes) {
    fill_buffer(a, max_a, t.name, 1);
    fill_buffer(b, max_b, t.name, 2);
    for (const auto& s : shapes) {
      if (t.name == "fp8" && (s.m % 16 || s.n % 16 || s.k % 16))
        continue;  // fp8 kernels need multiples of 16
      Gemm g(lt, t, s, a, b, d, workspace, workspace_bytes);
      if (!g.ok()) {
        std::fprintf(stderr, "calib-gemm: no cuBLASLt algorithm for %s %ldx%ldx%ld batch %ld; skipped\n",
                     t.name.c_str(), s.m, s.n, s.k, s.batch);
        continue;
      }
      calib::Timing tm = time_gemm(g, warmup, repeats, stream);
      double flops = 2.0 * s.m * s.n * s.k * s.batch;
      std::fprintf(out, "%s,%s,%ld,%ld,%ld,%ld,%.3f,%.3f,%.2f,%d\n", s.shape_class, t.name.c_str(), s.m, s.n,
                   s.k, s.batch, tm.median_s * 1e6, tm.min_s * 1e6, flops / tm.median_s / 1e12, repeats);
      std::fflush(out);
    }
  }

  // Burst vs sustained: the same bf16 GEMM timed right away and at the end of a long stretch of load.
  double sustain = args.number("sustain-seconds");
  if (sustain > 0) {
    Shape s{"burst", 8192, 8192, 8192, 1};
    Dtype bf16{"bf16", CUDA_R_16BF, CUDA_R_16BF, 2, 2};
    fill_buffer(a, max_a, "bf16", 3);
    fill_buffer(b, max_b, "bf16", 4);
    Gemm g(lt, bf16, s, a, b, d, workspace, workspace_bytes);
    if (g.ok()) {
      calib::Timing burst = time_gemm(g, warmup, repeats, stream);
      auto begin = std::chrono::steady_clock::now();
      while (std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count() < sustain) {
        for (int i = 0; i < 50; ++i) g.run(stream);
        CALIB_CUDA(cudaStreamSynchronize(stream));
      }
      calib::Timing sustained = time_gemm(g, 0, repeats, stream);
      double flops = 2.0 * s.m * s.n * s.k;
      for (auto [name, tm] : {std::pair{"burst", burst}, std::pair{"sustained", sustained}})
        std::fprintf(out, "%s,bf16,%ld,%ld,%ld,1,%.3f,%.3f,%.2f,%d\n", name, s.m, s.n, s.k, tm.median_s * 1e6,
                     tm.min_s * 1e6, flops / tm.median_s / 1e12, repeats);
      std::fprintf(out, "# sm_clock_after_sustained_load_MHz: %d\n",
                   static_cast<int>(calib::measure_sm_clock_mhz(device)));
    }
  }
  if (out != stdout) std::fclose(out);
  cublasLtDestroy(lt);
  return 0;
}
