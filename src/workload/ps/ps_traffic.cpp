#include "podsim/workload/ps/ps_traffic.hpp"

#include <algorithm>
#include <cmath>

#include "podsim/workload/transformer/layer_ops.hpp"

namespace podsim::workload {
namespace {

// Random 4 KiB reads to fetch `rows` requested rows out of a shard of `shard_rows` rows of `row_bytes`,
// rows hashed into pages independently of popularity: the expected number of distinct pages holding at
// least one of them, P (1 - exp(-rows / P)) (occupancy of P pages by `rows` uniform throws).
double ssd_reads(double rows, double shard_rows, double row_bytes) {
  if (rows <= 0) return 0;
  double per_page = std::floor(kSsdPageBytes / row_bytes);
  if (per_page < 1) return rows * std::ceil(row_bytes / kSsdPageBytes);
  double pages = std::max(1.0, shard_rows / per_page);
  return pages * -std::expm1(-rows / pages);
}

// Finding the distinct keys among `draws` key occurrences: the key stream read sequentially, one hash-set
// line read and written back per distinct key.
double dedup_bytes(double draws, double unique, double key_bytes) {
  return draws * key_bytes + 2 * unique * kHostLineBytes;
}

}  // namespace

double host_lines(double bytes) {
  return std::ceil(bytes / kHostLineBytes) * kHostLineBytes;
}

double hbm_sectors(double bytes) {
  return std::ceil(bytes / kHbmSectorBytes) * kHbmSectorBytes;
}

HierarchicalPsTraffic hierarchical_ps_traffic(const CtrWorkload& w, const ZipfKeys& zipf, int nodes, int gpus,
                                              int minibatches, double dram_cache_bytes) {
  const EmbeddingTable& t = w.model.embedding;
  const double n = nodes, g = gpus, b = w.training.batch_per_gpu, nnz = w.model.nonzeros_per_example;
  const double entry = t.entry_bytes(), value = t.value_bytes(), line = host_lines(entry);
  const double remote = (n - 1) / n;  // share of a server's keys that other servers own
  HierarchicalPsTraffic r;
  r.nodes = nodes;
  r.gpus = gpus;
  r.minibatches = minibatches;
  r.examples_per_batch = n * g * b * minibatches;
  const double draws_cluster = r.examples_per_batch * nnz;
  r.draws_per_node = draws_cluster / n;
  r.unique_per_node = zipf.expected_unique(r.draws_per_node);
  r.unique_cluster = zipf.expected_unique(draws_cluster);
  r.owned_per_node = r.unique_cluster / n;

  // DRAM caches: each server caches the hottest rows it owns; together they hold the top n x C ranks.
  r.cache_rows_per_node = std::floor(dram_cache_bytes / entry);
  double cached_ranks = std::min(zipf.keys(), n * r.cache_rows_per_node);
  r.access_hit_rate = zipf.head_mass(cached_ranks);
  double cached_unique = zipf.expected_unique(draws_cluster, 1, cached_ranks);
  r.owned_hit_rate = r.unique_cluster > 0 ? cached_unique / r.unique_cluster : 1;
  r.ssd_rows_per_node = (r.unique_cluster - cached_unique) / n;
  r.ssd_shard_bytes = t.table_bytes() / n;
  r.ssd_read_ios = ssd_reads(r.ssd_rows_per_node, t.features / n, entry);
  r.ssd_read_bytes = r.ssd_read_ios * kSsdPageBytes;
  r.ssd_write_bytes = r.ssd_rows_per_node * entry;  // appended sequentially

  r.working_set_bytes = r.unique_per_node * entry;
  r.pull_bytes_sent = remote * r.working_set_bytes;
  r.push_bytes_sent = remote * r.working_set_bytes;
  r.pcie_bytes_per_gpu = r.working_set_bytes / g;

  // Host DRAM, in cache lines. Load: dedup, SSD rows inserted, rows read to serve other servers and
  // received rows written (as many as a server requests, by symmetry), and the working set partitioned
  // into per-GPU buffers (read + write).
  r.dram_dedup_bytes = dedup_bytes(r.draws_per_node, r.unique_per_node, t.key_bytes);
  r.dram_load_bytes = r.dram_dedup_bytes + r.ssd_rows_per_node * line +
                      2 * remote * r.unique_per_node * line + 2 * r.unique_per_node * line;
  // Dump: pushed rows read, received rows merged into the owner's table (write + read-modify-write), the
  // server's own rows written back, rows leaving for SSD read.
  r.dram_dump_bytes = remote * r.unique_per_node * line + 2 * remote * r.unique_per_node * line +
                      r.unique_per_node / n * line + r.ssd_rows_per_node * line;

  // Per GPU per mini-batch.
  const double draws_gpu = b * nnz;
  r.unique_per_gpu_minibatch = zipf.expected_unique(draws_gpu);
  const double u = r.unique_per_gpu_minibatch;
  r.nvlink_bytes_per_gpu = u * value;  // the all-to-all's per-GPU buffer; (g-1)/g of it crosses NVLink
  const double pooled = b * w.model.slots * value;
  r.hbm_forward_bytes = draws_gpu * (kHbmSectorBytes + hbm_sectors(value)) + pooled;  // probe + row lookup
  r.hbm_backward_bytes = pooled + 2 * draws_gpu * hbm_sectors(value);                 // scatter-add
  r.hbm_update_bytes = 2 * u * hbm_sectors(value + t.dimension * t.optimizer_bytes_per_value)  // optimizer
                       + 4 * u * value;  // pull/push buffers on both ends
  r.hbm_bytes_per_gpu = r.hbm_forward_bytes + r.hbm_backward_bytes + r.hbm_update_bytes;
  r.allreduce_bytes = w.model.dense_params() * element_bytes(w.training.precision);

  r.hbm_rows_bytes_per_gpu = r.working_set_bytes / g;
  // Batch k+1 assembled, batch k-1 being dumped, and batch k+2's key set and the rows read for it.
  r.dram_staging_bytes =
      2 * r.working_set_bytes + r.unique_per_node * t.key_bytes + r.ssd_rows_per_node * entry;
  return r;
}

CpuPsTraffic cpu_ps_traffic(const CtrWorkload& w, const ZipfKeys& zipf, int nodes) {
  const EmbeddingTable& t = w.model.embedding;
  const double n = nodes, b = w.training.batch_per_cpu_node, nnz = w.model.nonzeros_per_example;
  const double value = t.value_bytes(), entry_line = host_lines(t.entry_bytes());
  CpuPsTraffic r;
  r.nodes = nodes;
  r.draws_per_node = b * nnz;
  r.unique_per_node = zipf.expected_unique(r.draws_per_node);
  const double u = r.unique_per_node;
  r.pulled_rows_bytes = u * value;
  r.pull_bytes_sent = (n - 1) / n * r.pulled_rows_bytes;
  r.push_bytes_sent = r.pull_bytes_sent;
  // Worker: dedup probes, received rows written, lookups for pooling, pooled output, gradient scatter-add,
  // gradients read to push. Owner (as many rows as a worker requests, by symmetry): rows looked up to
  // serve pulls, rows updated by the optimizer (read-modify-write of weights and state).
  r.dram_bytes = dedup_bytes(r.draws_per_node, u, t.key_bytes) + u * value +
                 r.draws_per_node * host_lines(value) + b * w.model.slots * value +
                 2 * r.draws_per_node * host_lines(value) + u * value + u * entry_line + 2 * u * entry_line;
  r.allreduce_bytes = w.model.dense_params() * element_bytes(w.training.precision);
  r.table_bytes_per_node = t.table_bytes() / n;
  return r;
}

}  // namespace podsim::workload
