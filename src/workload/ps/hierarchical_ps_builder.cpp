#include "podsim/workload/ps/hierarchical_ps_builder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "podsim/core/error.hpp"
#include "podsim/core/units.hpp"
#include "podsim/network/collective.hpp"
#include "podsim/network/link_load.hpp"
#include "podsim/workload/ps/ctr_costs.hpp"
#include "podsim/workload/ps/ctr_memory.hpp"
#include "podsim/workload/ps/ps_collectives.hpp"
#include "podsim/workload/ps/ps_step_graph.hpp"
#include "podsim/workload/ps/ps_traffic.hpp"

namespace podsim::workload {
namespace {

using network::CollectiveKind;
using plan::CommPlan;

class Builder {
 public:
  Builder(const topology::Topology& topo, const CtrWorkload& w, int minibatches)
      : topo_(topo),
        w_(w),
        m_(minibatches),
        g_(topo.devices_per_node),
        n_(topo.nodes),
        zipf_(w.model.embedding.features, w.model.zipf_exponent),
        cm_(device_compute_model(topo, w.training.precision)) {
    t_ = hierarchical_ps_traffic(w_, zipf_, n_, g_, m_, w_.ps.dram_cache_bytes);
    mlp_ = mlp_cost(w_.model.mlp_widths(), w_.training.batch_per_gpu, cm_);
    // Embedding kernels per GPU per mini-batch, all bound by HBM traffic (see ps_traffic.hpp).
    emb_forward_s_ = cm_.memory_op(t_.hbm_forward_bytes);
    emb_backward_s_ = cm_.memory_op(t_.hbm_backward_bytes);
    sparse_update_s_ = cm_.memory_op(t_.hbm_update_bytes);
    dense_update_s_ = dense_update_seconds(w_, cm_);
    // Host tiers.
    const auto& h = topo_.host;
    pcie_s_ = t_.pcie_bytes_per_gpu / h.pcie_bandwidth;
    dram_dedup_s_ = t_.dram_dedup_bytes / h.memory_bandwidth;
    dram_load_s_ = (t_.dram_load_bytes - t_.dram_dedup_bytes) / h.memory_bandwidth;
    dram_dump_s_ = t_.dram_dump_bytes / h.memory_bandwidth;
    ssd_read_s_ = std::max(t_.ssd_read_ios / h.ssd_read_iops, t_.ssd_read_bytes / h.ssd_read_bandwidth);
    ssd_write_s_ = t_.ssd_write_bytes / h.ssd_write_bandwidth;
    // Network plans (unscaled: one mini-batch, or one batch for pull/push).
    for (int d = 0; d < g_; ++d) node0_.push_back(d);
    for (int d = 0; d < topo_.device_count(); ++d) all_.push_back(d);
    nvlink_ = network::plan_collective(
        topo_, network::make_collective(CollectiveKind::all_to_all, node0_, t_.nvlink_bytes_per_gpu));
    auto reduce = fastest_all_reduce(topo_, all_, t_.allreduce_bytes);
    allreduce_ = std::move(reduce.plan);
    allreduce_algorithm_ = reduce.algorithm;
    pull_ = between_servers(t_.working_set_bytes);
    push_ = between_servers(t_.working_set_bytes);
  }

  StepPlan describe() const {
    StepPlan plan;
    plan.workload_kind = "ctr_sparse_ps";
    plan.devices = n_ * g_;
    plan.samples_per_step = t_.examples_per_batch;
    plan.tokens_per_step = 0;
    plan.peak_flops = topo_.device.peak(w_.training.precision);
    plan.hardware_flops = plan.model_flops = mlp_.flops * n_ * g_ * m_;
    plan.memory = {memory()};
    plan.graph.lane_kind = "GPU server";
    plan.graph.lane_names = {"server 0 (GPU 0, its host and SSD)"};
    plan.settings = settings();
    plan.description = fmt::format(
        "hierarchical GPU PS, {} server{} x {} GPUs: batch of {:.3g} examples ({} per GPU x {} "
        "mini-batches), "
        "working set {:.3g} rows per server, {}",
        n_, n_ == 1 ? "" : "s", g_, t_.examples_per_batch, w_.training.batch_per_gpu, m_, t_.unique_per_node,
        w_.ps.pipeline ? "SSD/network/GPU/dump stages pipelined"
                       : "SSD, network, GPU, dump stages in sequence");
    plan.notes = notes();
    plan.metrics = metrics();
    plan.kernels = mlp_.kernels;
    plan.kernels.push_back(
        {"embedding", "row lookup + sum pooling", emb_forward_s_, 0, t_.hbm_forward_bytes});
    plan.kernels.push_back({"embedding", "gradient scatter-add", emb_backward_s_, 0, t_.hbm_backward_bytes});
    plan.kernels.push_back(
        {"embedding", "sparse optimizer on held rows", sparse_update_s_, 0, t_.hbm_update_bytes});
    plan.kernels.push_back({"mlp", "dense optimizer", dense_update_s_, 0, 0});
    return plan;
  }

  void check() const {
    const auto& h = topo_.host;
    auto mem = memory();
    if (mem.total() > topo_.device.hbm_bytes)
      throw InfeasibleConfig(
          MemoryShortfall{"device HBM", mem.total(), topo_.device.hbm_bytes},
          fmt::format(
              "the working set of {:.3g} rows per server needs {:.1f} GiB per GPU (rows and optimizer "
              "state {:.1f}, MLP and activations {:.2f}, buffers {:.2f}, framework {:.1f}) but a {} has "
              "{:.0f} GiB; use "
              "fewer training.minibatches_per_batch (now {}) or a smaller training.batch_per_gpu",
              t_.unique_per_node, mem.total() / GiB, (mem.weights + mem.optimizer) / GiB,
              (mem.gradients + mem.activations) / GiB, mem.buffers / GiB, mem.framework / GiB,
              topo_.device.name, topo_.device.hbm_bytes / GiB, m_));
    if (w_.ps.dram_cache_bytes + t_.dram_staging_bytes > h.memory_bytes)
      throw InfeasibleConfig(
          MemoryShortfall{"host DRAM", w_.ps.dram_cache_bytes + t_.dram_staging_bytes, h.memory_bytes},
          fmt::format("host DRAM: the {:.0f} GiB hot-key cache and {:.0f} GiB of staging (the batches being "
                      "loaded and the one being dumped) exceed the {:.0f} GiB per server; use a smaller "
                      "ps.dram_cache_GiB or fewer training.minibatches_per_batch",
                      w_.ps.dram_cache_bytes / GiB, t_.dram_staging_bytes / GiB, h.memory_bytes / GiB));
    if (t_.ssd_shard_bytes > h.ssd_bytes)
      throw InfeasibleConfig(
          MemoryShortfall{"host SSD", t_.ssd_shard_bytes, h.ssd_bytes},
          fmt::format("SSD: each server stores 1/{} of the {:.3g} TB table = {:.3g} TB but has {:.3g} TB; "
                      "use at least {} servers",
                      n_, w_.model.embedding.table_bytes() / 1e12, t_.ssd_shard_bytes / 1e12,
                      h.ssd_bytes / 1e12,
                      static_cast<int>(std::ceil(w_.model.embedding.table_bytes() / h.ssd_bytes))));
  }

  StepPlan build() {
    StepPlan plan = describe();
    check();
    PsStepGraph g(plan.graph.lane_kind, plan.graph.lane_names);
    int gpu = g.add_stream("server 0 GPU 0");
    int pcie = g.add_stream("server 0 PCIe host<->HBM");
    int ssd = g.add_stream("server 0 SSD");
    int dram_load = g.add_stream("server 0 DRAM (load)");
    int dram_dump = g.add_stream("server 0 DRAM (dump)");
    int net_pull = g.add_stream("server 0 network pull", false);
    int net_push = g.add_stream("server 0 network push", false);

    // The paper's pipeline stages, each on its own resources and each on a different batch; in sequence
    // (ps.pipeline: false) every stage waits for the one before.
    auto after = [&](std::vector<int> previous) { return w_.ps.pipeline ? std::vector<int>{} : previous; };
    // SSD stage, batch k+2: find its distinct keys, read the rows the owners miss in DRAM.
    int dedup = g.add(dram_load, TaskKind::dedup, dram_dedup_s_, Category::storage);
    int read = g.add(ssd, TaskKind::ssd_read, ssd_read_s_, Category::storage, {dedup});
    // Network stage, batch k+1: pull rows from their owners, partition the working set per GPU.
    int pulled = g.add(net_pull, TaskKind::pull, 0, Category::storage, after({read}), g.add_plan(pull_),
                       Category::stream);
    int staged = g.add(dram_load, TaskKind::dram_load, dram_load_s_, Category::storage, after({read}));
    // GPU stage, batch k: host -> HBM, the mini-batches, HBM -> host.
    int last = g.add(pcie, TaskKind::host_copy, pcie_s_, Category::storage, after({pulled, staged}));
    int rounds = std::min(m_, kPsRounds);
    double k = static_cast<double>(m_) / rounds;
    int nvlink = g.add_plan(network::scaled(nvlink_, k));
    int allreduce = g.add_plan(network::scaled(allreduce_, k));
    for (int r = 0; r < rounds; ++r) {
      g.add(gpu, TaskKind::gather, 0, Category::compute, {last}, nvlink,
            Category::stream);  // pull rows from peer GPUs
      g.add(gpu, TaskKind::forward, k * (mlp_.seconds() + emb_forward_s_ + emb_backward_s_),
            Category::compute, {}, nvlink,
            Category::stream);  // forward, backward, push row gradients to their GPUs
      g.add(gpu, TaskKind::dp, 0, Category::compute, {}, allreduce, Category::dp);
      last = g.add(gpu, TaskKind::optimizer, k * (sparse_update_s_ + dense_update_s_), Category::compute);
    }
    int trained = g.add(pcie, TaskKind::host_copy, pcie_s_, Category::storage, {last});
    // Dump stage, batch k-1: push updated rows to their owners, merge, write the uncached ones to SSD
    // (after this step's reads: the SSD serves one request stream at a time).
    int pushed = g.add(net_push, TaskKind::push, 0, Category::storage, after({trained}), g.add_plan(push_),
                       Category::stream);
    int merged = g.add(dram_dump, TaskKind::dram_merge, dram_dump_s_, Category::storage, after({trained}));
    g.add(ssd, TaskKind::ssd_write, ssd_write_s_, Category::storage, {pushed, merged});
    plan.graph = g.take();
    return plan;
  }

 private:
  // All-to-all between servers: each server sends every other server the rows it owns and that server
  // needs (`bytes` = a server's whole working set; 1/n of it is its own). Spread over the server's NICs:
  // one all-to-all per rail among the servers' first device on that rail (host traffic enters the NIC
  // through the same PCIe switch).
  CommPlan between_servers(double bytes) const {
    if (n_ < 2) return {};
    std::map<int, int> first_on_rail;
    for (int d = 0; d < g_; ++d) first_on_rail.emplace(std::max(0, topo_.rail_of(d)), d);
    std::vector<CommPlan> plans;
    for (const auto& [rail, local] : first_on_rail) {
      std::vector<int> group;
      for (int s = 0; s < n_; ++s) group.push_back(s * g_ + local);
      plans.push_back(all_to_all(topo_, group, bytes / first_on_rail.size()));
    }
    return network::concurrent(plans);
  }

  // A GPU holds its share of the server's working set; its buffers are the rows pulled from peer GPUs
  // and their gradients.
  MemoryBreakdown memory() const {
    return ps_device_memory(w_, t_.unique_per_node / g_, w_.training.batch_per_gpu,
                            2 * t_.nvlink_bytes_per_gpu, topo_.device_profile);
  }

  std::vector<std::pair<std::string, std::string>> settings() const {
    return {{"examples_per_batch", fmt::format("{:.6g}", t_.examples_per_batch)},
            {"embedding_TB", fmt::format("{:.4g}", w_.model.embedding.table_bytes() / 1e12)},
            {"zipf_exponent", fmt::format("{:g}", w_.model.zipf_exponent)},
            {"batch_per_device", std::to_string(w_.training.batch_per_gpu)},
            {"minibatches_per_batch", std::to_string(m_)},
            {"dram_cache_GiB", fmt::format("{:.6g}", w_.ps.dram_cache_bytes / GiB)},
            {"precision", topology::to_string(w_.training.precision)}};
  }

  std::vector<std::pair<std::string, double>> metrics() const {
    double allreduce_s = m_ * network::idle_plan_time(topo_, allreduce_);
    double nvlink_s = 2 * m_ * network::idle_plan_time(topo_, nvlink_);
    return {
        {"unique_keys_per_server", t_.unique_per_node},
        {"dram_cache_hit_rate", t_.access_hit_rate},
        {"ssd_read_GB_per_server", t_.ssd_read_bytes / 1e9},
        {"ssd_write_GB_per_server", t_.ssd_write_bytes / 1e9},
        {"dram_GB_per_server", (t_.dram_load_bytes + t_.dram_dump_bytes) / 1e9},
        {"pcie_GB_per_gpu", 2 * t_.pcie_bytes_per_gpu / 1e9},
        {"hbm_GB_per_gpu", m_ * t_.hbm_bytes_per_gpu / 1e9},
        {"network_pull_GB_per_server", t_.pull_bytes_sent / 1e9},
        {"network_push_GB_per_server", t_.push_bytes_sent / 1e9},
        {"ssd_busy_s", ssd_read_s_ + ssd_write_s_},
        {"dram_busy_s", dram_dedup_s_ + dram_load_s_ + dram_dump_s_},
        {"pcie_busy_s", 2 * pcie_s_},
        {"hbm_embedding_s", m_ * (emb_forward_s_ + emb_backward_s_ + sparse_update_s_)},
        {"network_pull_s", network::idle_plan_time(topo_, pull_)},
        {"network_push_s", network::idle_plan_time(topo_, push_)},
        {"nvlink_pull_push_s", nvlink_s},
        {"mlp_compute_s", m_ * (mlp_.seconds() + dense_update_s_)},
        {"allreduce_s", allreduce_s},
    };
  }

  std::vector<std::string> notes() const {
    return {
        fmt::format(
            "folded: {} servers x {} GPUs are represented by server 0 and its GPU 0; every server's "
            "pull/push and every GPU's all-reduce are on the network; {} mini-batches run as {} tasks",
            n_, g_, m_, std::min(m_, kPsRounds)),
        fmt::format("keys: Zipf exponent {:g} over {:.3g} rows; {:.3g} distinct keys per server per batch, "
                    "{:.3g} per GPU mini-batch; DRAM caches hold the {:.3g} hottest rows ({:.1f}% of key "
                    "draws, {:.1f}% of a batch's distinct rows)",
                    w_.model.zipf_exponent, w_.model.embedding.features, t_.unique_per_node,
                    t_.unique_per_gpu_minibatch, n_ * t_.cache_rows_per_node, 100 * t_.access_hit_rate,
                    100 * t_.owned_hit_rate),
        fmt::format("dense gradients: {:.3g} MB all-reduced over all {} GPUs after every mini-batch ({}, the "
                    "fastest on an idle network), as the paper synchronizes the MLP each mini-batch",
                    t_.allreduce_bytes / 1e6, n_ * g_, network::to_string(allreduce_algorithm_)),
        "metrics ending in _s are busy seconds of one resource per step on an idle system (the simulated "
        "step overlaps them); _GB are bytes moved per step",
        "storage tiers are timers: SSD (reads for batch k+2, then writes for batch k-1, in order), "
        "host DRAM (cache-line traffic at the sustained bandwidth), PCIe host<->HBM per GPU; DMA reads and "
        "writes of host memory are not charged to DRAM",
        "not modelled: reading training examples, SSD file compaction, hash-table load factor and the CPU "
        "cost of hashing beyond its memory traffic, DRAM contention between load, train and dump, "
        "staleness and convergence (examples/s only)",
    };
  }

  const topology::Topology& topo_;
  const CtrWorkload& w_;
  int m_, g_, n_;
  ZipfKeys zipf_;
  calibration::ComputeModel cm_;
  HierarchicalPsTraffic t_;
  MlpCost mlp_;
  double emb_forward_s_ = 0, emb_backward_s_ = 0, sparse_update_s_ = 0, dense_update_s_ = 0;
  double pcie_s_ = 0, dram_dedup_s_ = 0, dram_load_s_ = 0, dram_dump_s_ = 0, ssd_read_s_ = 0,
         ssd_write_s_ = 0;
  std::vector<int> node0_, all_;
  CommPlan nvlink_, allreduce_, pull_, push_;
  network::Algorithm allreduce_algorithm_ = network::Algorithm::ring;
};

}  // namespace

StepPlan build_hierarchical_ps_step(const topology::Topology& topo, const CtrWorkload& w, int minibatches) {
  return Builder(topo, w, minibatches).build();
}

StepPlan describe_hierarchical_ps_step(const topology::Topology& topo, const CtrWorkload& w,
                                       int minibatches) {
  return Builder(topo, w, minibatches).describe();
}

void check_hierarchical_ps_fits(const topology::Topology& topo, const CtrWorkload& w, int minibatches) {
  Builder(topo, w, minibatches).check();
}

}  // namespace podsim::workload
