#include "podsim/workload/ps/cpu_ps_builder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

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

using plan::CommPlan;

class Builder {
 public:
  Builder(const topology::Topology& topo, const CtrWorkload& w, int minibatches)
      : topo_(topo),
        w_(w),
        m_(minibatches),
        n_(topo.device_count()),
        zipf_(w.model.embedding.features, w.model.zipf_exponent),
        cm_(device_compute_model(topo, w.training.precision)) {
    t_ = cpu_ps_traffic(w_, zipf_, n_);
    mlp_ = mlp_cost(w_.model.mlp_widths(), w_.training.batch_per_cpu_node, cm_);
    embedding_s_ = cm_.memory_op(t_.dram_bytes);
    dense_update_s_ = dense_update_seconds(w_, cm_);
    std::vector<int> all;
    for (int d = 0; d < n_; ++d) all.push_back(d);
    rows_ = all_to_all(topo_, all, t_.pulled_rows_bytes);
    auto reduce = fastest_all_reduce(topo_, all, t_.allreduce_bytes);
    allreduce_ = std::move(reduce.plan);
    allreduce_algorithm_ = reduce.algorithm;
  }

  StepPlan describe() const {
    StepPlan plan;
    plan.workload_kind = "ctr_sparse_ps";
    plan.devices = n_;
    plan.samples_per_step = static_cast<double>(n_) * w_.training.batch_per_cpu_node * m_;
    plan.peak_flops = topo_.device.peak(w_.training.precision);
    plan.hardware_flops = plan.model_flops = mlp_.flops * n_ * m_;
    plan.memory = {memory()};
    plan.graph.lane_kind = "CPU server";
    plan.graph.lane_names = {"server 0"};
    plan.settings = {{"examples_per_batch", fmt::format("{:.6g}", plan.samples_per_step)},
                     {"embedding_TB", fmt::format("{:.4g}", w_.model.embedding.table_bytes() / 1e12)},
                     {"zipf_exponent", fmt::format("{:g}", w_.model.zipf_exponent)},
                     {"batch_per_device", std::to_string(w_.training.batch_per_cpu_node)},
                     {"minibatches_per_batch", std::to_string(m_)},
                     {"precision", topology::to_string(w_.training.precision)}};
    plan.description = fmt::format(
        "in-memory CPU PS, {} servers: mini-batch of {} examples per server, {:.3g} distinct keys each; "
        "the {:.3g} TB table in DRAM ({:.1f} GiB per server)",
        n_, w_.training.batch_per_cpu_node, t_.unique_per_node, w_.model.embedding.table_bytes() / 1e12,
        t_.table_bytes_per_node / GiB);
    plan.notes = {
        fmt::format("folded: {} servers are represented by server 0; every server's pull/push and the "
                    "all-reduce are on the network{}; {} mini-batches run as {} tasks per stream",
                    n_,
                    n_ > 49 ? " (the all-to-all sampled as 48 cyclic shifts: each server's bytes exact, "
                              "shared rack links within 1%)"
                            : "",
                    m_, std::min(m_, kPsRounds)),
        fmt::format("keys: Zipf exponent {:g} over {:.3g} rows; {:.3g} distinct keys per server mini-batch "
                    "of {} examples",
                    w_.model.zipf_exponent, w_.model.embedding.features, t_.unique_per_node,
                    w_.training.batch_per_cpu_node),
        "the whole table lives in the servers' DRAM: no SSD or HBM tier, ps.dram_cache_GiB does not apply",
        fmt::format(
            "dense gradients: {:.3g} MB all-reduced over {} servers every mini-batch ({}, the fastest "
            "on an idle network), applied at most one mini-batch late",
            t_.allreduce_bytes / 1e6, n_, network::to_string(allreduce_algorithm_)),
        "metrics ending in _s are busy seconds of one resource per step on an idle system; _GB are bytes "
        "moved per step",
        "DRAM traffic is counted in whole 64-byte lines at the profile's sustained (STREAM-like) bandwidth; "
        "random-access latency limits below that are not modelled (optimistic for the CPU cluster)",
        "not modelled: reading training examples, CPU cost of message handling beyond its memory traffic, "
        "TCP/MPI CPU overhead, asynchronous-update staleness and convergence (examples/s only)",
    };
    double pull_s = network::idle_plan_time(topo_, rows_);
    plan.metrics = {
        {"unique_keys_per_server_minibatch", t_.unique_per_node},
        {"table_GiB_per_server", t_.table_bytes_per_node / GiB},
        {"dram_GB_per_server", m_ * t_.dram_bytes / 1e9},
        {"network_pull_GB_per_server", m_ * t_.pull_bytes_sent / 1e9},
        {"network_push_GB_per_server", m_ * t_.push_bytes_sent / 1e9},
        {"dram_embedding_s", m_ * embedding_s_},
        {"mlp_compute_s", m_ * (mlp_.seconds() + dense_update_s_)},
        {"network_pull_s", m_ * pull_s},
        {"network_push_s", m_ * pull_s},
        {"allreduce_s", m_ * network::idle_plan_time(topo_, allreduce_)},
    };
    plan.kernels = mlp_.kernels;
    plan.kernels.push_back({"embedding", "dedup, gathers, gradient scatter, owner lookups and updates",
                            embedding_s_, 0, t_.dram_bytes});
    plan.kernels.push_back({"mlp", "dense optimizer", dense_update_s_, 0, 0});
    return plan;
  }

  void check() const {
    auto mem = memory();
    if (mem.total() <= topo_.device.hbm_bytes) return;
    double other = mem.total() - t_.table_bytes_per_node;
    double room = topo_.device.hbm_bytes - other;
    std::string need =
        room > 0 ? fmt::format("use at least {} servers",
                               static_cast<long long>(std::ceil(w_.model.embedding.table_bytes() / room)))
                 : std::string("the server's DRAM cannot even hold the buffers");
    throw InfeasibleConfig(
        MemoryShortfall{"server DRAM", mem.total(), topo_.device.hbm_bytes},
        fmt::format(
            "DRAM: each of {} servers holds 1/{} of the {:.3g} TB table = {:.1f} GiB, plus {:.1f} GiB of "
            "MLP, buffers and framework, but has {:.0f} GiB; {}",
            n_, n_, w_.model.embedding.table_bytes() / 1e12, t_.table_bytes_per_node / GiB, other / GiB,
            topo_.device.hbm_bytes / GiB, need));
  }

  StepPlan build() {
    StepPlan plan = describe();
    check();
    PsStepGraph g(plan.graph.lane_kind, plan.graph.lane_names);
    int cpu = g.add_stream("server 0 cores and DRAM");
    int pull = g.add_stream("server 0 pull", false);
    int push = g.add_stream("server 0 push", false);
    int reduce = g.add_stream("server 0 all-reduce", false);
    int rounds = std::min(m_, kPsRounds);
    double k = static_cast<double>(m_) / rounds;
    int rows = g.add_plan(network::scaled(rows_, k));
    int allreduce = g.add_plan(network::scaled(allreduce_, k));
    int prev_compute = -1, prev_pull = -1;
    std::vector<int> reduces;
    for (int r = 0; r < rounds; ++r) {
      // Compute of round r needs its rows (prefetched by the previous round's pull, or by the previous
      // step for round 0) and dense weights at most one round stale (an asynchronous parameter server lets
      // the dense update of round r-1 land while round r computes).
      std::vector<int> deps;
      if (prev_pull >= 0) deps.push_back(prev_pull);
      if (r >= 2) deps.push_back(reduces[r - 2]);
      int compute = g.add(cpu, TaskKind::forward, k * (mlp_.seconds() + embedding_s_ + dense_update_s_),
                          Category::compute, deps);
      // Prefetch of the next round's rows, once the buffer of the round before this one is free.
      std::vector<int> pull_deps;
      if (prev_compute >= 0) pull_deps.push_back(prev_compute);
      prev_pull = g.add(pull, TaskKind::pull, 0, Category::compute, pull_deps, rows, Category::stream);
      g.add(push, TaskKind::push, 0, Category::compute, {compute}, rows, Category::stream);
      reduces.push_back(
          g.add(reduce, TaskKind::dp, 0, Category::compute, {compute}, allreduce, Category::dp));
      prev_compute = compute;
    }
    plan.graph = g.take();
    return plan;
  }

 private:
  // A server holds 1/n of the table; its buffers are the rows pulled for this and the next mini-batch,
  // and their gradients.
  MemoryBreakdown memory() const {
    return ps_device_memory(w_, w_.model.embedding.features / n_, w_.training.batch_per_cpu_node,
                            4 * t_.pulled_rows_bytes, topo_.device_profile);
  }

  const topology::Topology& topo_;
  const CtrWorkload& w_;
  int m_, n_;
  ZipfKeys zipf_;
  calibration::ComputeModel cm_;
  CpuPsTraffic t_;
  MlpCost mlp_;
  double embedding_s_ = 0, dense_update_s_ = 0;
  CommPlan rows_, allreduce_;
  network::Algorithm allreduce_algorithm_ = network::Algorithm::ring;
};

}  // namespace

StepPlan build_cpu_ps_step(const topology::Topology& topo, const CtrWorkload& w, int minibatches) {
  return Builder(topo, w, minibatches).build();
}

StepPlan describe_cpu_ps_step(const topology::Topology& topo, const CtrWorkload& w, int minibatches) {
  return Builder(topo, w, minibatches).describe();
}

}  // namespace podsim::workload
