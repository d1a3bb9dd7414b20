#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <sstream>

#include "bench_common.hpp"

namespace calib {

void die(const std::string& message) {
  std::fprintf(stderr, "calib: error: %s\n", message.c_str());
  std::exit(2);
}

void check_cuda(cudaError_t status, const char* what, const char* file, int line) {
  if (status != cudaSuccess)
    die(std::string(what) + " failed at " + file + ":" + std::to_string(line) + ": " +
        cudaGetErrorString(status));
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

Timing timing_of(const std::vector<double>& samples) {
  return {median(samples), *std::min_element(samples.begin(), samples.end())};
}

Args::Args(int argc, char** argv, const std::map<std::string, std::string>& defaults, const char* usage)
    : values_(defaults) {
  command_ = argv[0];
  for (int i = 1; i < argc; ++i) command_ += std::string(" ") + argv[i];
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf("%s", usage);
      std::exit(0);
    }
    if (a.rfind("--", 0) != 0 || !values_.count(a.substr(2))) {
      std::string valid;
      for (const auto& [k, v] : defaults) valid += " --" + k;
      die("unknown argument '" + a + "'; valid:" + valid + " (see --help)");
    }
    std::string key = a.substr(2);
    if (values_[key] == "off" || values_[key] == "on")
      values_[key] = "on";
    else if (i + 1 < argc)
      values_[key] = argv[++i];
    else
      die("--" + key + " needs a value");
  }
}

std::string Args::get(const std::string& key) const {
  return values_.at(key);
}

double Args::number(const std::string& key) const {
  const std::string& s = values_.at(key);
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0') die("--" + key + " expects a number, got '" + s + "'");
  return v;
}

std::vector<std::string> Args::list(const std::string& key) const {
  std::vector<std::string> out;
  std::stringstream ss(values_.at(key));
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string utc_now() {
  std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

namespace {

__global__ void clock_probe(long long* out, long long spin_cycles) {
  long long start_ns, end_ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start_ns));
  long long start = clock64();
  while (clock64() - start < spin_cycles) {
  }
  long long cycles = clock64() - start;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(end_ns));
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    out[0] = cycles;
    out[1] = end_ns - start_ns;
  }
}

std::string version_text(int v) {  // CUDA's 1000*major + 10*minor
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace

double measure_sm_clock_mhz(int device) {
  CALIB_CUDA(cudaSetDevice(device));
  long long* d = nullptr;
  CALIB_CUDA(cudaMalloc(&d, 2 * sizeof(long long)));
  int sms = 0;
  CALIB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  // One block per SM so that the whole chip is busy (the clock depends on load), ~20 ms at ~1.5 GHz.
  clock_probe<<<sms, 32>>>(d, 30'000'000);
  CALIB_CUDA(cudaGetLastError());
  long long h[2] = {0, 0};
  CALIB_CUDA(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  CALIB_CUDA(cudaFree(d));
  return h[1] > 0 ? static_cast<double>(h[0]) / h[1] * 1e3 : 0;
}

int select_device(const Args& args) {
  int device = static_cast<int>(args.number("device"));
  CALIB_CUDA(cudaSetDevice(device));
  return device;
}

std::map<std::string, std::string> device_provenance(int device) {
  std::map<std::string, std::string> f;
  cudaDeviceProp prop{};
  CALIB_CUDA(cudaGetDeviceProperties(&prop, device));
  auto attr = [&](cudaDeviceAttr a) {
    int v = 0;
    CALIB_CUDA(cudaDeviceGetAttribute(&v, a, device));
    return v;
  };
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  int driver = 0, runtime = 0;
  CALIB_CUDA(cudaDriverGetVersion(&driver));
  CALIB_CUDA(cudaRuntimeGetVersion(&runtime));
  f["host"] = host;
  f["device"] = prop.name;
  f["compute_capability"] = std::to_string(prop.major) + "." + std::to_string(prop.minor);
  f["sm_count"] = std::to_string(prop.multiProcessorCount);
  f["max_sm_clock_MHz"] = std::to_string(attr(cudaDevAttrClockRate) / 1000);
  f["memory_clock_MHz"] = std::to_string(attr(cudaDevAttrMemoryClockRate) / 1000);
  f["memory_bus_width_bits"] = std::to_string(attr(cudaDevAttrGlobalMemoryBusWidth));
  f["memory_GiB"] = std::to_string(prop.totalGlobalMem / double(1 << 30));
  f["driver"] = version_text(driver);
  f["cuda_runtime"] = version_text(runtime);
  f["measured_sm_clock_MHz"] = std::to_string(static_cast<int>(measure_sm_clock_mhz(device)));
  return f;
}

FILE* open_csv(const std::string& path, const std::string& tool, const std::string& command,
               const std::map<std::string, std::string>& fields) {
  FILE* f = path == "-" ? stdout : std::fopen(path.c_str(), "w");
  if (!f) die("cannot write " + path);
  std::fprintf(f, "# tool: %s\n# command: %s\n# date: %s\n", tool.c_str(), command.c_str(),
               utc_now().c_str());
  for (const auto& [k, v] : fields) std::fprintf(f, "# %s: %s\n", k.c_str(), v.c_str());
  return f;
}

}  // namespace calib
