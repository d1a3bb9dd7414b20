// Keys and bytes a parameter server moves through each storage tier and link in one step, in closed form
// from the Zipf law of key popularity (zipf_keys.hpp). The step builders turn these into device time and
// network flows; tests check them against their definitions.
//
// Hierarchical GPU parameter server (Zhao et al., MLSys 2020), per batch of `minibatches` mini-batches on
// every GPU of `nodes` servers of `gpus` GPUs:
// - keys are hash-partitioned over servers (each server owns 1/nodes of the table, on its SSD) and, within
//   a server's HBM, over its GPUs; the DRAM caches of all servers together hold the hottest
//   nodes x cache rows (each server the hot rows it owns);
// - load: a server finds the distinct keys of its share of the batch (its working set), each owner reads
//   its requested rows that miss its DRAM cache from SSD (random 4 KiB reads: rows hashed into pages, so
//   several misses can share a page), and sends the rows other servers requested (all-to-all: weights and
//   optimizer state, because the GPUs run the optimizer);
// - train: the working set goes host -> HBM over PCIe, split over the server's GPUs; each mini-batch a GPU
//   pulls the rows of its distinct keys from the GPU that holds them (NVLink), runs the MLP, pushes the
//   row gradients back (the holder applies the optimizer) and all-reduces the dense gradients; at the end
//   the updated working set goes HBM -> host;
// - dump: updated rows go back to their owners (all-to-all), which merge them and append the rows they do
//   not cache to SSD (sequential writes).
// Host DRAM traffic is counted in whole 64-byte cache lines per random row access; HBM traffic in 32-byte
// sectors. Finding a batch's distinct keys reads the key stream sequentially and touches one hash-set
// line per distinct key (inserted, then written back); repeated probes of a key are taken to hit the
// CPU's caches (true for the hot keys that make up most draws, optimistic for the lukewarm ones).
//
// In-memory CPU parameter server (MPI), per mini-batch of `batch_per_cpu_node` examples on each of `nodes`
// servers: every server is worker and server; the whole table lives in the servers' DRAM (1/nodes each);
// a worker pulls the weights of its mini-batch's distinct keys from their owners, trains, pushes their
// gradients, and the owners apply the optimizer; dense gradients are all-reduced.
#pragma once

#include "podsim/workload/ps/ctr_config.hpp"
#include "podsim/workload/ps/zipf_keys.hpp"

namespace podsim::workload {

constexpr double kHostLineBytes = 64;   // CPU cache line: the unit of a random DRAM access
constexpr double kHbmSectorBytes = 32;  // GPU memory sector: the unit of a random HBM access
constexpr double kSsdPageBytes = 4096;  // SSD read unit (the IOPS figures are for 4 KiB reads)

double host_lines(double bytes);   // bytes moved by a random access of `bytes` (whole cache lines)
double hbm_sectors(double bytes);  // likewise in HBM sectors

struct HierarchicalPsTraffic {
  int nodes = 0, gpus = 0, minibatches = 0;
  double examples_per_batch = 0;  // whole cluster
  // Keys
  double draws_per_node = 0;       // key occurrences in one server's share of the batch
  double unique_per_node = 0;      // its distinct keys: the server's working set
  double unique_cluster = 0;       // distinct keys of the whole batch
  double owned_per_node = 0;       // unique_cluster / nodes: rows each owner serves
  double cache_rows_per_node = 0;  // rows one server's DRAM cache holds
  double access_hit_rate = 0;      // key draws whose row is in a DRAM cache
  double owned_hit_rate = 0;       // distinct requested rows an owner finds in DRAM
  double ssd_rows_per_node = 0;    // requested rows an owner reads from SSD (cache misses)
  double unique_per_gpu_minibatch = 0;
  // Bytes per server per batch
  double ssd_read_ios = 0, ssd_read_bytes = 0, ssd_write_bytes = 0;
  double dram_dedup_bytes = 0;  // part of dram_load_bytes: finding the batch's distinct keys
  double dram_load_bytes = 0, dram_dump_bytes = 0;
  double pcie_bytes_per_gpu = 0;  // each way: host -> HBM before training, HBM -> host after
  double working_set_bytes = 0;   // unique_per_node rows
  double pull_bytes_sent = 0;     // to other servers (= received, by symmetry)
  double push_bytes_sent = 0;
  // Per GPU per mini-batch
  double nvlink_bytes_per_gpu = 0;  // each way: rows pulled from, gradients pushed to other GPUs
  double hbm_forward_bytes = 0;     // embedding kernels: key probes, row lookups, pooled output
  double hbm_backward_bytes = 0;    // pooled gradients read, row gradients scatter-added
  double hbm_update_bytes = 0;      // optimizer on the rows the GPU holds, pull/push buffers
  double hbm_bytes_per_gpu = 0;     // the three together
  double allreduce_bytes = 0;       // dense gradients
  // Memory
  double hbm_rows_bytes_per_gpu = 0;  // the GPU's share of the working set
  double dram_staging_bytes = 0;      // batches being loaded (k+1, k+2) and dumped (k-1) in host DRAM
  double ssd_shard_bytes = 0;         // the table rows a server owns
};

HierarchicalPsTraffic hierarchical_ps_traffic(const CtrWorkload& w, const ZipfKeys& zipf, int nodes, int gpus,
                                              int minibatches, double dram_cache_bytes);

struct CpuPsTraffic {
  int nodes = 0;
  double draws_per_node = 0;     // per mini-batch
  double unique_per_node = 0;    // per mini-batch
  double pulled_rows_bytes = 0;  // weights of the mini-batch's distinct keys (all-to-all buffer per server)
  double pull_bytes_sent = 0, push_bytes_sent = 0;  // to other servers per mini-batch
  double dram_bytes = 0;       // per mini-batch: dedup, gathers, gradient scatter, owner lookups and updates
  double allreduce_bytes = 0;  // dense gradients
  double table_bytes_per_node = 0;
};

CpuPsTraffic cpu_ps_traffic(const CtrWorkload& w, const ZipfKeys& zipf, int nodes);

}  // namespace podsim::workload
