// calib-memory: achieved HBM bandwidth of streaming kernels and of the memory-bound kernels a transformer
// layer runs, over sizes from 1 MiB to a few GiB, for podsim's memory-bound cost (bytes / achieved
// bandwidth + kernel overhead). One CSV row per (kernel, size) with bytes = read + written.
//   copy, read, write   plain streams: the ceiling of what HBM gives
//   elementwise         bias + GeLU in bf16 (read x, write y), as Megatron's fused bias-GeLU
//   layernorm           bf16 rows of `hidden` elements: mean/variance in fp32, scale and shift
//   softmax             bf16 rows of `seq` elements: scaled, max-subtracted exponentials, normalized
#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace {

const char* kUsage =
    "calib-memory: time streaming and memory-bound transformer kernels over sizes; one CSV row each.\n"
    "  --out FILE         CSV to write (default: - = stdout)\n"
    "  --max-bytes N      largest buffer per kernel in bytes (default 4294967296)\n"
    "  --hidden N         layer-norm row length (default 8192)\n"
    "  --seq N            softmax row length (default 2048)\n"
    "  --repeats N        timed samples per size (default 20); the median is reported\n"
    "  --device N         GPU index (default 0)\n";

using bf16 = __nv_bfloat16;

__global__ void copy_kernel(const float4* __restrict__ x, float4* __restrict__ y, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    y[i] = x[i];
}

__global__ void read_kernel(const float4* __restrict__ x, float* __restrict__ sink, size_t n) {
  float acc = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    float4 v = x[i];
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 12345.678f) sink[0] = acc;  // keeps the loads; never true for the data written
}

__global__ void write_kernel(float4* __restrict__ y, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    y[i] = make_float4(1, 2, 3, 4);
}

__global__ void bias_gelu_kernel(const bf16* __restrict__ x, const bf16* __restrict__ bias,
                                 bf16* __restrict__ y, size_t n, int hidden) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    float v = __bfloat162float(x[i]) + __bfloat162float(bias[i % hidden]);
    y[i] = __float2bfloat16(0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v))));
  }
}

// One block per row; each thread keeps its slice of the row in registers between the two passes.
template <int kPerThread>
__global__ void layernorm_kernel(const bf16* __restrict__ x, const bf16* __restrict__ gamma,
                                 const bf16* __restrict__ beta, bf16* __restrict__ y, int hidden) {
  const bf16* row = x + size_t(blockIdx.x) * hidden;
  float v[kPerThread];
  float sum = 0, sq = 0;
  for (int j = 0; j < kPerThread; ++j) {
    int c = threadIdx.x + j * blockDim.x;
    v[j] = c < hidden ? __bfloat162float(row[c]) : 0.f;
    sum += v[j];
    sq += v[j] * v[j];
  }
  __shared__ float s_sum[32], s_sq[32];
  for (int o = 16; o > 0; o /= 2) sum += __shfl_xor_sync(~0u, sum, o), sq += __shfl_xor_sync(~0u, sq, o);
  if (threadIdx.x % 32 == 0) s_sum[threadIdx.x / 32] = sum, s_sq[threadIdx.x / 32] = sq;
  __syncthreads();
  sum = 0, sq = 0;
  for (int w = 0; w < int(blockDim.x / 32); ++w) sum += s_sum[w], sq += s_sq[w];
  float mean = sum / hidden, rstd = rsqrtf(fmaxf(sq / hidden - mean * mean, 0.f) + 1e-5f);
  for (int j = 0; j < kPerThread; ++j) {
    int c = threadIdx.x + j * blockDim.x;
    if (c < hidden)
      y[size_t(blockIdx.x) * hidden + c] =
          __float2bfloat16((v[j] - mean) * rstd * __bfloat162float(gamma[c]) + __bfloat162float(beta[c]));
  }
}

template <int kPerThread>
__global__ void softmax_kernel(const bf16* __restrict__ x, bf16* __restrict__ y, int seq, float scale) {
  const bf16* row = x + size_t(blockIdx.x) * seq;
  float v[kPerThread];
  float mx = -INFINITY;
  for (int j = 0; j < kPerThread; ++j) {
    int c = threadIdx.x + j * blockDim.x;
    v[j] = c < seq ? __bfloat162float(row[c]) * scale : -INFINITY;
    mx = fmaxf(mx, v[j]);
  }
  __shared__ float s_red[32];
  for (int o = 16; o > 0; o /= 2) mx = fmaxf(mx, __shfl_xor_sync(~0u, mx, o));
  if (threadIdx.x % 32 == 0) s_red[threadIdx.x / 32] = mx;
  __syncthreads();
  mx = -INFINITY;
  for (int w = 0; w < int(blockDim.x / 32); ++w) mx = fmaxf(mx, s_red[w]);
  __syncthreads();
  float sum = 0;
  for (int j = 0; j < kPerThread; ++j) v[j] = expf(v[j] - mx), sum += v[j];
  for (int o = 16; o > 0; o /= 2) sum += __shfl_xor_sync(~0u, sum, o);
  if (threadIdx.x % 32 == 0) s_red[threadIdx.x / 32] = sum;
  __syncthreads();
  sum = 0;
  for (int w = 0; w < int(blockDim.x / 32); ++w) sum += s_red[w];
  for (int j = 0; j < kPerThread; ++j) {
    int c = threadIdx.x + j * blockDim.x;
    if (c < seq) y[size_t(blockIdx.x) * seq + c] = __float2bfloat16(v[j] / sum);
  }
}

__global__ void fill_bf16(bf16* p, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = __float2bfloat16(static_cast<float>((i * 2654435761u) % 2001) / 1000.0f - 1.0f);
}

template <typename Launch>
calib::Timing time_kernel(Launch launch, int repeats) {
  calib::EventTimer timer;
  for (int i = 0; i < 3; ++i) launch();
  CALIB_CUDA(cudaGetLastError());
  std::vector<double> samples;
  for (int r = 0; r < repeats; ++r) samples.push_back(timer.milliseconds(0, launch) * 1e-3);
  CALIB_CUDA(cudaGetLastError());
  return calib::timing_of(samples);
}

}  // namespace

int main(int argc, char** argv) {
  calib::Args args(argc, argv,
                   {{"out", "-"},
                    {"max-bytes", "4294967296"},
                    {"hidden", "8192"},
                    {"seq", "2048"},
                    {"repeats", "20"},
                    {"device", "0"}},
                   kUsage);
  int device = calib::select_device(args);
  auto fields = calib::device_provenance(device);
  int sms = std::stoi(fields["sm_count"]);
  size_t max_bytes = static_cast<size_t>(args.number("max-bytes"));
  int hidden = static_cast<int>(args.number("hidden")), seq = static_cast<int>(args.number("seq"));
  int repeats = static_cast<int>(args.number("repeats"));
  if (hidden > 16384 || seq > 16384 || hidden % 1024 || seq % 1024)
    calib::die("--hidden and --seq must be multiples of 1024, at most 16384");
  fields["layernorm_hidden"] = std::to_string(hidden);
  fields["softmax_seq"] = std::to_string(seq);

  void *x, *y;
  CALIB_CUDA(cudaMalloc(&x, max_bytes));
  CALIB_CUDA(cudaMalloc(&y, max_bytes));
  bf16 *bias, *gamma, *beta;
  float* sink;
  CALIB_CUDA(cudaMalloc(&bias, 16384 * sizeof(bf16)));
  CALIB_CUDA(cudaMalloc(&gamma, 16384 * sizeof(bf16)));
  CALIB_CUDA(cudaMalloc(&beta, 16384 * sizeof(bf16)));
  CALIB_CUDA(cudaMalloc(&sink, sizeof(float)));
  fill_bf16<<<1024, 256>>>(static_cast<bf16*>(x), max_bytes / 2);
  for (bf16* p : {bias, gamma, beta}) fill_bf16<<<16, 256>>>(p, 16384);
  CALIB_CUDA(cudaDeviceSynchronize());

  FILE* out = calib::open_csv(args.get("out"), "calib-memory", args.command(), fields);
  std::fprintf(out, "kernel,bytes,elements,median_time_us,min_time_us,achieved_GBps,repeats\n");
  const int grid = sms * 8, block = 256;
  auto row = [&](const char* kernel, size_t bytes, size_t elements, calib::Timing t) {
    std::fprintf(out, "%s,%zu,%zu,%.3f,%.3f,%.1f,%d\n", kernel, bytes, elements, t.median_s * 1e6,
                 t.min_s * 1e6, bytes / t.median_s / 1e9, repeats);
    std::fflush(out);
  };
  for (size_t buffer = 1 << 20; buffer <= max_bytes; buffer *= 4) {
    size_t n4 = buffer / 16;
    row("copy", 2 * buffer, buffer / 4,
        time_kernel(
            [&] { copy_kernel<<<grid, block>>>(static_cast<float4*>(x), static_cast<float4*>(y), n4); },
            repeats));
  }
  for (size_t buffer = 1 << 20; buffer <= max_bytes; buffer *= 4) {
    size_t n4 = buffer / 16;
    row("read", buffer, buffer / 4,
        time_kernel([&] { read_kernel<<<grid, block>>>(static_cast<float4*>(x), sink, n4); }, repeats));
  }
  for (size_t buffer = 1 << 20; buffer <= max_bytes; buffer *= 4) {
    size_t n4 = buffer / 16;
    row("write", buffer, buffer / 4,
        time_kernel([&] { write_kernel<<<grid, block>>>(static_cast<float4*>(y), n4); }, repeats));
  }
  for (size_t buffer = 1 << 20; buffer <= max_bytes; buffer *= 4) {
    size_t n = buffer / 2;
    row("elementwise", 2 * buffer, n,
        time_kernel(
            [&] {
              bias_gelu_kernel<<<grid, block>>>(static_cast<bf16*>(x), bias, static_cast<bf16*>(y), n,
                                                hidden);
            },
            repeats));
  }
  for (size_t buffer = 1 << 20; buffer <= max_bytes; buffer *= 4) {
    int rows = static_cast<int>(buffer / 2 / hidden);
    if (rows == 0) continue;
    row("layernorm", 2 * size_t(rows) * hidden * 2, size_t(rows) * hidden,
        time_kernel(
            [&] {
              layernorm_kernel<16>
                  <<<rows, 1024>>>(static_cast<bf16*>(x), gamma, beta, static_cast<bf16*>(y), hidden);
            },
            repeats));
  }
  for (size_t buffer = 1 << 20; buffer <= max_bytes; buffer *= 4) {
    int rows = static_cast<int>(std::min<size_t>(buffer / 2 / seq, 1u << 30));
    if (rows == 0) continue;
    row("softmax", 2 * size_t(rows) * seq * 2, size_t(rows) * seq,
        time_kernel(
            [&] {
              softmax_kernel<16><<<rows, 1024>>>(static_cast<bf16*>(x), static_cast<bf16*>(y), seq, 0.088f);
            },
            repeats));
  }
  if (out != stdout) std::fclose(out);
  return 0;
}
