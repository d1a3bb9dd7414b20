// calib-nccl: NCCL collective times over sizes from 8 B to 8 GB (doubling), for podsim's fabric profile
// (podsim calibrate nccl-tests reads this CSV as well as nccl-tests logs). Sizes and busbw follow
// nccl-tests: the per-rank buffer for all_reduce, the gathered buffer for all_gather and reduce_scatter,
// the bytes each rank sends for all_to_all and send_recv (a ring: rank r sends to r+1).
//
// One node: one process drives every visible GPU (ncclCommInitAll). Several nodes: one process per GPU
// under a launcher (srun, mpirun, torchrun): rank and size come from SLURM_PROCID/SLURM_NTASKS,
// OMPI_COMM_WORLD_RANK/SIZE or RANK/WORLD_SIZE, the local GPU from the matching local-rank variable, and
// rank 0 hands NCCL's unique id to the others through --id-file on a shared file system.
#include <nccl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bench_common.hpp"

namespace {

const char* kUsage =
    "calib-nccl: time NCCL collectives over sizes; one CSV row per (collective, size).\n"
    "  --out FILE        CSV to write (rank 0; default: - = stdout)\n"
    "  --ops LIST        all_reduce,all_gather,reduce_scatter,all_to_all,send_recv (default all)\n"
    "  --min-bytes N     smallest size (default 8)\n"
    "  --max-bytes N     largest size (default 8589934592; lowered to fit GPU memory)\n"
    "  --id-file PATH    multi-process mode: where rank 0 writes NCCL's unique id (shared file system)\n";

#define CALIB_NCCL(call)                                                                          \
  do {                                                                                            \
    ncclResult_t r_ = (call);                                                                     \
    if (r_ != ncclSuccess) calib::die(std::string(#call) + " failed: " + ncclGetErrorString(r_)); \
  } while (0)

int env_int(std::initializer_list<const char*> names, int fallback) {
  for (const char* n : names)
    if (const char* v = std::getenv(n)) return std::atoi(v);
  return fallback;
}

struct Rank {
  int device;
  ncclComm_t comm;
  cudaStream_t stream;
  char *send, *recv;
};

double bus_factor(const std::string& op, int n) {
  if (op == "all_reduce") return 2.0 * (n - 1) / n;
  if (op == "all_gather" || op == "reduce_scatter" || op == "all_to_all") return double(n - 1) / n;
  return 1;
}

void launch(const std::string& op, Rank& r, int rank, int n, size_t bytes) {
  size_t count = bytes / 4;  // float elements
  if (op == "all_reduce") {
    CALIB_NCCL(ncclAllReduce(r.send, r.recv, count, ncclFloat, ncclSum, r.comm, r.stream));
  } else if (op == "all_gather") {
    CALIB_NCCL(ncclAllGather(r.send, r.recv, count / n, ncclFloat, r.comm, r.stream));
  } else if (op == "reduce_scatter") {
    CALIB_NCCL(ncclReduceScatter(r.send, r.recv, count / n, ncclFloat, ncclSum, r.comm, r.stream));
  } else if (op == "all_to_all") {
    size_t chunk = count / n;
    for (int p = 0; p < n; ++p) {
      CALIB_NCCL(ncclSend(r.send + p * chunk * 4, chunk, ncclFloat, p, r.comm, r.stream));
      CALIB_NCCL(ncclRecv(r.recv + p * chunk * 4, chunk, ncclFloat, p, r.comm, r.stream));
    }
  } else {  // send_recv ring
    CALIB_NCCL(ncclSend(r.send, count, ncclFloat, (rank + 1) % n, r.comm, r.stream));
    CALIB_NCCL(ncclRecv(r.recv, count, ncclFloat, (rank + n - 1) % n, r.comm, r.stream));
  }
}

}  // namespace

int main(int argc, char** argv) {
  calib::Args args(argc, argv,
                   {{"out", "-"},
                    {"ops", "all_reduce,all_gather,reduce_scatter,all_to_all,send_recv"},
                    {"min-bytes", "8"},
                    {"max-bytes", "8589934592"},
                    {"id-file", ""}},
                   kUsage);
  for (const auto& op : args.list("ops"))
    if (op != "all_reduce" && op != "all_gather" && op != "reduce_scatter" && op != "all_to_all" &&
        op != "send_recv")
      calib::die("--ops: unknown collective '" + op + "'");
  bool multi = !args.get("id-file").empty();
  int nprocs = multi ? env_int({"SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "WORLD_SIZE"}, 1) : 1;
  int proc = multi ? env_int({"SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "RANK"}, 0) : 0;
  int local = multi ? env_int({"SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "LOCAL_RANK"}, 0) : 0;

  int visible = 0;
  CALIB_CUDA(cudaGetDeviceCount(&visible));
  std::vector<int> devices;
  if (multi)
    devices = {local % std::max(visible, 1)};
  else
    for (int d = 0; d < visible; ++d) devices.push_back(d);
  if (devices.empty()) calib::die("no GPU visible");
  int nranks = multi ? nprocs : static_cast<int>(devices.size());

  std::vector<Rank> ranks(devices.size());
  if (multi) {
    ncclUniqueId id;
    std::string path = args.get("id-file");
    if (proc == 0) {
      CALIB_NCCL(ncclGetUniqueId(&id));
      std::ofstream(path + ".tmp", std::ios::binary).write(reinterpret_cast<char*>(&id), sizeof id);
      std::rename((path + ".tmp").c_str(), path.c_str());
    } else {
      auto start = std::chrono::steady_clock::now();
      for (;;) {
        std::ifstream in(path, std::ios::binary);
        if (in && in.read(reinterpret_cast<char*>(&id), sizeof id)) break;
        if (std::chrono::steady_clock::now() - start > std::chrono::seconds(120))
          calib::die("rank " + std::to_string(proc) + ": no NCCL id in " + path + " after 120 s");
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
    }
    CALIB_CUDA(cudaSetDevice(devices[0]));
    CALIB_NCCL(ncclCommInitRank(&ranks[0].comm, nranks, id, proc));
  } else {
    std::vector<ncclComm_t> comms(devices.size());
    CALIB_NCCL(ncclCommInitAll(comms.data(), static_cast<int>(devices.size()), devices.data()));
    for (size_t i = 0; i < devices.size(); ++i) ranks[i].comm = comms[i];
  }

  // Buffers: the largest size that fits next to NCCL's own memory on every local GPU.
  size_t max_bytes = static_cast<size_t>(std::strtod(args.get("max-bytes").c_str(), nullptr));
  size_t min_bytes =
      std::max<size_t>(8, static_cast<size_t>(std::strtod(args.get("min-bytes").c_str(), nullptr)));
  for (size_t i = 0; i < ranks.size(); ++i) {
    ranks[i].device = devices[i];
    CALIB_CUDA(cudaSetDevice(devices[i]));
    size_t free_bytes = 0, total = 0;
    CALIB_CUDA(cudaMemGetInfo(&free_bytes, &total));
    while (max_bytes > min_bytes && 2 * max_bytes > free_bytes * 8 / 10) max_bytes /= 2;
  }
  for (auto& r : ranks) {
    CALIB_CUDA(cudaSetDevice(r.device));
    CALIB_CUDA(cudaStreamCreate(&r.stream));
    CALIB_CUDA(cudaMalloc(&r.send, max_bytes));
    CALIB_CUDA(cudaMalloc(&r.recv, max_bytes));
    CALIB_CUDA(cudaMemset(r.send, 0, max_bytes));
  }

  // Hosts of all ranks, gathered over NCCL itself (no MPI needed), for the provenance header.
  char host[64] = {0};
  gethostname(host, sizeof host - 1);
  std::set<std::string> hosts;
  {
    for (auto& r : ranks) {
      CALIB_CUDA(cudaSetDevice(r.device));
      CALIB_CUDA(cudaMemcpy(r.send, host, 64, cudaMemcpyHostToDevice));
    }
    CALIB_NCCL(ncclGroupStart());
    for (auto& r : ranks) {
      CALIB_CUDA(cudaSetDevice(r.device));
      CALIB_NCCL(ncclAllGather(r.send, r.recv, 64, ncclChar, r.comm, r.stream));
    }
    CALIB_NCCL(ncclGroupEnd());
    std::vector<char> all(64 * size_t(nranks));
    CALIB_CUDA(cudaSetDevice(ranks[0].device));
    CALIB_CUDA(cudaStreamSynchronize(ranks[0].stream));
    CALIB_CUDA(cudaMemcpy(all.data(), ranks[0].recv, all.size(), cudaMemcpyDeviceToHost));
    for (int i = 0; i < nranks; ++i)
      hosts.insert(std::string(all.data() + 64 * i, strnlen(all.data() + 64 * i, 64)));
  }

  FILE* out = nullptr;
  if (proc == 0) {
    auto fields = calib::device_provenance(ranks[0].device);
    int version = 0;
    CALIB_NCCL(ncclGetVersion(&version));
    fields["nccl"] = std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
                     std::to_string(version % 100);
    std::string host_list;
    for (const auto& h : hosts) host_list += (host_list.empty() ? "" : " ") + h;
    fields["hosts"] = host_list;
    fields["ranks"] = std::to_string(nranks);
    fields["nodes"] = std::to_string(hosts.size());
    out = calib::open_csv(args.get("out"), "calib-nccl", args.command(), fields);
    std::fprintf(out, "op,ranks,nodes,bytes,median_time_us,algbw_GBps,busbw_GBps,iterations\n");
  }

  auto run_all = [&](const std::string& op, size_t bytes, int iterations) {
    for (int it = 0; it < iterations; ++it) {
      CALIB_NCCL(ncclGroupStart());
      for (size_t i = 0; i < ranks.size(); ++i) {
        CALIB_CUDA(cudaSetDevice(ranks[i].device));
        launch(op, ranks[i], multi ? proc : static_cast<int>(i), nranks, bytes);
      }
      CALIB_NCCL(ncclGroupEnd());
    }
    for (auto& r : ranks) {
      CALIB_CUDA(cudaSetDevice(r.device));
      CALIB_CUDA(cudaStreamSynchronize(r.stream));
    }
  };
  for (const auto& op : args.list("ops")) {
    for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
      if (bytes / 4 < size_t(nranks)) continue;  // at least one element per rank
      run_all(op, bytes, 3);                     // warm-up (and NCCL's lazy connection setup)
      // The same count on every rank (a count derived from each process's own timing could differ between
      // processes and leave collectives unmatched): ~50 ms per sample at ~100 GB/s, 5 to 200 launches.
      int iterations = static_cast<int>(std::clamp<size_t>(size_t(5e9) / bytes, 5, 200));
      std::vector<double> samples;
      for (int s = 0; s < 5; ++s) {
        auto start = std::chrono::steady_clock::now();
        run_all(op, bytes, iterations);
        samples.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
                          iterations);
      }
      double t = calib::median(samples);
      if (out)
        std::fprintf(out, "%s,%d,%zu,%zu,%.3f,%.3f,%.3f,%d\n", op.c_str(), nranks, hosts.size(), bytes,
                     t * 1e6, bytes / t / 1e9, bytes / t / 1e9 * bus_factor(op, nranks), 5 * iterations);
    }
    if (out) std::fflush(out);
  }
  if (out && out != stdout) std::fclose(out);
  for (auto& r : ranks) ncclCommDestroy(r.comm);
  if (multi && proc == 0) std::remove(args.get("id-file").c_str());
  return 0;
}
