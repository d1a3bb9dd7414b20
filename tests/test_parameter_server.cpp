// The CTR sparse-embedding workload (kind: ctr_sparse_ps): Zipf key expectations against Monte Carlo and
// closed forms, bytes per tier against their definitions, the overlap of prefetch and training, both
// machines end to end, and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "podsim/core/config_node.hpp"
#include "podsim/core/error.hpp"
#include "podsim/driver/simulation.hpp"
#include "podsim/engine/replay.hpp"
#include "podsim/network/link_load.hpp"
#include "podsim/topology/graph.hpp"
#include "podsim/workload/ps/ctr_config.hpp"
#include "podsim/workload/ps/ps_collectives.hpp"
#include "podsim/workload/ps/ps_traffic.hpp"
#include "podsim/workload/ps/zipf_keys.hpp"
#include "podsim/workload/workload_model.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::workload;

namespace {

const std::string kWorkload = "workloads/ctr-sparse-ps.yaml";

// Draws `draws` keys from Zipf(keys, s) by inverting the exact CDF; returns (distinct keys, distinct keys
// of rank <= c, draws of rank <= c).
struct Sample {
  double unique = 0, unique_head = 0, draws_head = 0;
};

class ZipfSampler {
 public:
  ZipfSampler(int keys, double s) : cdf_(keys) {
    double sum = 0;
    for (int i = 0; i < keys; ++i) cdf_[i] = sum += std::pow(i + 1.0, -s);
  }
  Sample draw(long long draws, int head, std::mt19937_64& rng) const {
    std::uniform_real_distribution<double> u(0, cdf_.back());
    std::vector<char> seen(cdf_.size(), 0);
    Sample out;
    for (long long j = 0; j < draws; ++j) {
      size_t rank = std::upper_bound(cdf_.begin(), cdf_.end(), u(rng)) - cdf_.begin();  // 0-based
      rank = std::min(rank, cdf_.size() - 1);
      if (static_cast<int>(rank) < head) out.draws_head++;
      if (!seen[rank]) {
        seen[rank] = 1;
        out.unique++;
        if (static_cast<int>(rank) < head) out.unique_head++;
      }
    }
    return out;
  }

 private:
  std::vector<double> cdf_;
};

std::unique_ptr<WorkloadModel> model_on(const topology::Topology& topo, Overrides sets) {
  return load_workload_model(podsim::testing::source_path(kWorkload), sets, topo);
}

CtrWorkload ctr_workload(Overrides sets = {}) {
  ConfigNode root = ConfigNode::load_file(podsim::testing::source_path(kWorkload));
  for (const auto& [k, v] : sets) root.apply_override(k, v, "--set workload." + k + "=" + v);
  return read_ctr_workload(root, kWorkload);
}

std::string model_error(const topology::Topology& topo, Overrides sets) {
  return podsim::testing::error_of([&] { model_on(topo, sets); });
}

}  // namespace

// ---- key popularity ---------------------------------------------------------------------------------

TEST(ParameterServer, UniqueKeysPerBatchMatchMonteCarlo) {
  // 200k keys: the first 65536 ranks are summed exactly, the rest integrated, so both paths are checked.
  const int keys = 200000;
  std::mt19937_64 rng(20200312);
  for (double s : {0.0, 0.8, 1.1, 1.5})
    for (long long draws : {20000LL, 400000LL}) {
      ZipfSampler sampler(keys, s);
      ZipfKeys zipf(keys, s);
      const int trials = 6;
      double sum = 0, sum_sq = 0;
      for (int t = 0; t < trials; ++t) {
        double u = sampler.draw(draws, 1, rng).unique;
        sum += u;
        sum_sq += u * u;
      }
      double mean = sum / trials;
      double sd = std::sqrt(std::max(0.0, sum_sq / trials - mean * mean));
      double expected = zipf.expected_unique(static_cast<double>(draws));
      // Within 5 standard errors of the Monte Carlo mean, and within 0.5% (the sampling noise is tiny).
      EXPECT_NEAR(expected, mean, 5 * sd / std::sqrt(trials) + 0.005 * mean)
          << "s=" << s << " draws=" << draws;
    }
}

TEST(ParameterServer, ZipfSumsMatchClosedFormsAtScale) {
  // Uniform popularity has a closed form: N (1 - (1 - 1/N)^M), here with N = 1e9 (mostly integrated).
  const double n = 1e9, m = 3e9;
  ZipfKeys uniform(n, 0);
  EXPECT_NEAR(uniform.expected_unique(m) / (n * -std::expm1(m * std::log1p(-1 / n))), 1.0, 1e-6);
  EXPECT_NEAR(uniform.head_mass(n / 4), 0.25, 1e-6);
  // One draw is exactly one distinct key, whatever the law: checks normalization and the tail integral.
  for (double s : {0.9, 1.0, 1.1, 1.3}) {
    ZipfKeys zipf(1e11, s);
    EXPECT_NEAR(zipf.expected_unique(1), 1.0, 1e-6) << s;
    EXPECT_NEAR(zipf.head_mass(1e11), 1.0, 1e-12);
    // Distinct keys grow with the batch but never beyond the draws or the keys.
    double prev = 0;
    for (double d : {1e3, 1e6, 1e9, 1e12}) {
      double u = zipf.expected_unique(d);
      EXPECT_GT(u, prev);
      EXPECT_LE(u, std::min(d, 1e11) * (1 + 1e-9));
      prev = u;
    }
  }
  // A steeper law concentrates the draws: fewer distinct keys for the same batch.
  EXPECT_LT(ZipfKeys(1e11, 1.2).expected_unique(1e9), ZipfKeys(1e11, 1.0).expected_unique(1e9));
}

TEST(ParameterServer, CacheHitRatesMatchMonteCarlo) {
  const int keys = 200000;
  std::mt19937_64 rng(7);
  for (double s : {0.9, 1.2})
    for (int cache : {1000, 100000}) {
      ZipfSampler sampler(keys, s);
      ZipfKeys zipf(keys, s);
      const long long draws = 300000;
      Sample mc;
      const int trials = 4;
      for (int t = 0; t < trials; ++t) {
        Sample one = sampler.draw(draws, cache, rng);
        mc.unique += one.unique / trials;
        mc.unique_head += one.unique_head / trials;
        mc.draws_head += one.draws_head / trials;
      }
      // Access hit rate: the share of draws on the cached ranks.
      EXPECT_NEAR(zipf.head_mass(cache), mc.draws_head / draws, 0.003) << "s=" << s << " cache=" << cache;
      // Distinct-key hit rate: the share of a batch's distinct keys the cache holds.
      double expected = zipf.expected_unique(draws, 1, cache) / zipf.expected_unique(draws);
      EXPECT_NEAR(expected, mc.unique_head / mc.unique, 0.005) << "s=" << s << " cache=" << cache;
    }
}

// ---- bytes per tier ---------------------------------------------------------------------------------

TEST(ParameterServer, BytesPerTierFollowTheirDefinitions) {
  CtrWorkload w = ctr_workload({{"training.minibatches_per_batch", "64"}});
  const auto& e = w.model.embedding;
  ZipfKeys zipf(e.features, w.model.zipf_exponent);
  const double entry = e.entry_bytes();
  EXPECT_DOUBLE_EQ(entry, 8 + 8 * (4 + 8));  // key + 8 fp32 weights + Adam's two fp32 moments each
  EXPECT_NEAR(e.table_bytes(), 10.4e12, 1e9);

  auto t = hierarchical_ps_traffic(w, zipf, 4, 8, 64, w.ps.dram_cache_bytes);
  EXPECT_DOUBLE_EQ(t.examples_per_batch, 4.0 * 8 * 4096 * 64);
  EXPECT_NEAR(t.unique_per_node, zipf.expected_unique(t.examples_per_batch / 4 * 500), 1);
  EXPECT_NEAR(t.pcie_bytes_per_gpu, t.unique_per_node * entry / 8, 1);
  EXPECT_NEAR(t.pull_bytes_sent, 0.75 * t.unique_per_node * entry, 1);  // 3 of 4 owners are remote
  EXPECT_NEAR(t.push_bytes_sent, t.pull_bytes_sent, 1);
  EXPECT_NEAR(t.nvlink_bytes_per_gpu, zipf.expected_unique(4096 * 500.0) * e.value_bytes(), 1);
  // HBM per GPU mini-batch: a key probe and a 32-byte row per occurrence, the pooled 100 x 8 fp32 output.
  EXPECT_NEAR(t.hbm_forward_bytes, 4096 * 500.0 * (32 + 32) + 4096 * 100.0 * 32, 1);
  EXPECT_NEAR(t.hbm_bytes_per_gpu, t.hbm_forward_bytes + t.hbm_backward_bytes + t.hbm_update_bytes, 1);
  // DRAM caches hold the hottest n x C ranks; what they miss of the batch's distinct keys is read from SSD.
  double cached_ranks = 4 * std::floor(w.ps.dram_cache_bytes / entry);
  EXPECT_NEAR(t.access_hit_rate, zipf.head_mass(cached_ranks), 1e-12);
  double misses = (t.unique_cluster - zipf.expected_unique(t.examples_per_batch * 500, 1, cached_ranks)) / 4;
  EXPECT_NEAR(t.ssd_rows_per_node, misses, 1e-6 * misses);
  // 39 rows share a 4 KiB page, so some misses share a read, but never more than 39 of them.
  EXPECT_LE(t.ssd_read_ios, t.ssd_rows_per_node);
  EXPECT_GT(t.ssd_read_ios, t.ssd_rows_per_node / 39);
  EXPECT_NEAR(t.ssd_read_bytes, t.ssd_read_ios * 4096, 1);
  EXPECT_NEAR(t.ssd_write_bytes, t.ssd_rows_per_node * entry, 1);

  // A cache as large as the table: no SSD traffic, every access hits.
  auto all_cached = hierarchical_ps_traffic(w, zipf, 4, 8, 64, e.table_bytes());
  EXPECT_NEAR(all_cached.ssd_rows_per_node, 0, 1e-6 * t.ssd_rows_per_node);
  EXPECT_NEAR(all_cached.access_hit_rate, 1, 1e-12);
  // One server: nothing crosses the network.
  auto alone = hierarchical_ps_traffic(w, zipf, 1, 8, 64, w.ps.dram_cache_bytes);
  EXPECT_EQ(alone.pull_bytes_sent, 0);
  // Rows larger than a page cost whole pages each.
  CtrWorkload wide = ctr_workload({{"model.embedding.dimension", "512"}});
  ZipfKeys wide_zipf(wide.model.embedding.features, wide.model.zipf_exponent);
  auto wt = hierarchical_ps_traffic(wide, wide_zipf, 4, 8, 4, 0);
  EXPECT_NEAR(wt.ssd_read_ios, wt.ssd_rows_per_node * std::ceil(wide.model.embedding.entry_bytes() / 4096),
              1e-3);

  // CPU parameter server: a mini-batch's distinct keys, (N-1)/N of them from other servers, weights only.
  auto c = cpu_ps_traffic(w, zipf, 150);
  EXPECT_NEAR(c.unique_per_node, zipf.expected_unique(4096 * 500.0), 1e-9 * c.unique_per_node);
  EXPECT_NEAR(c.pull_bytes_sent, 149.0 / 150 * c.unique_per_node * e.value_bytes(), 1);
  EXPECT_NEAR(c.table_bytes_per_node, e.table_bytes() / 150, 1);
}

TEST(ParameterServer, NetworkPlansCarryTheTierBytes) {
  // The pull all-to-all on the network moves exactly the rows other servers own, from every server.
  auto topo = podsim::testing::preset("gpu-ps-4node");
  auto model = model_on(topo, {{"training.minibatches_per_batch", "16"}});
  StepPlan plan = model->build(0);
  CtrWorkload w = ctr_workload();
  ZipfKeys zipf(w.model.embedding.features, w.model.zipf_exponent);
  auto t = hierarchical_ps_traffic(w, zipf, 4, 8, 16, w.ps.dram_cache_bytes);
  const Task* pull = nullptr;
  for (const auto& task : plan.graph.tasks)
    if (task.kind == podsim::plan::TaskKind::pull && task.plan >= 0) {
      pull = &task;
      break;
    }
  ASSERT_NE(pull, nullptr);
  double from_server0 = 0, total = 0;
  for (const auto& f : plan.graph.plans[pull->plan][0].flows) {
    total += f.bytes;
    if (topo.node_of(f.src) == 0) from_server0 += f.bytes;
  }
  EXPECT_NEAR(from_server0, t.pull_bytes_sent, 1e-6 * t.pull_bytes_sent);
  EXPECT_NEAR(total, 4 * t.pull_bytes_sent, 1e-6 * total);
  // On an idle network it takes the NIC's time: 3/4 of the working set out of one 100 Gb/s port.
  double nic = 12.5e9 * topo.fabric_profile.efficiency("infiniband");
  EXPECT_NEAR(network::idle_phase_cost(topo, plan.graph.plans[pull->plan][0]).transfer,
              t.pull_bytes_sent / nic, 1e-6 * t.pull_bytes_sent / nic);
}

TEST(ParameterServer, SampledAllToAllKeepsTheLinkLoads) {
  // Beyond 48 peers the all-to-all is sampled by cyclic shifts: every rank still sends and receives its
  // bytes, and the time on an idle network stays within 1% of the full all-to-all's.
  for (const char* shape : {"fat_tree", "star"}) {
    auto topo = podsim::testing::preset(
        "cpu-mpi-cluster", {{"nodes", "300"}, {"network.kind", shape}, {"network.oversubscription", "3"}});
    std::vector<int> all;
    for (int d = 0; d < 300; ++d) all.push_back(d);
    auto sampled = all_to_all(topo, all, 1e9);
    auto full = all_to_all(topo, all, 1e9, 1000);
    ASSERT_EQ(full[0].flows.size(), 300u * 299);
    ASSERT_LT(sampled[0].flows.size(), full[0].flows.size() / 5);
    std::vector<double> sent(300, 0), received(300, 0);
    for (const auto& f : sampled[0].flows) sent[f.src] += f.bytes, received[f.dst] += f.bytes;
    for (int d = 0; d < 300; ++d) {
      EXPECT_NEAR(sent[d], 1e9 * 299 / 300, 1);
      EXPECT_NEAR(received[d], 1e9 * 299 / 300, 1);
    }
    EXPECT_NEAR(network::idle_plan_time(topo, sampled) / network::idle_plan_time(topo, full), 1.0, 0.01)
        << shape;
  }
}

// ---- pipelining -------------------------------------------------------------------------------------

TEST(ParameterServer, PrefetchOverlapsTrainingExactlyWhenNothingIsShared) {
  // One server with its whole shard cached in DRAM: the pipeline's stages (SSD, network, GPU, dump) share
  // no resource (no SSD traffic, no inter-server network, separate DRAM streams), so pipelined they take
  // the longest of the four and in sequence their sum.
  auto topo = podsim::testing::preset("gpu-ps-4node", {{"nodes", "1"}, {"node.host_memory_GiB", "16384"}});
  Overrides sets = {{"training.minibatches_per_batch", "32"}, {"ps.dram_cache_GiB", "12000"}};
  Overrides serial_sets = sets;
  serial_sets.push_back({"ps.pipeline", "false"});
  StepPlan pipelined = model_on(topo, sets)->build(0);
  StepPlan serial = model_on(topo, serial_sets)->build(0);
  auto rp = engine::replay(topo, pipelined.graph);
  auto rs = engine::replay(topo, serial.graph);
  // Stage ends in the serial run, by task kind: SSD stage (dedup, read), network stage (pull, staging),
  // GPU stage (PCIe copy, mini-batches: gather forward dp optimizer), dump stage (push, merge, write).
  using podsim::plan::TaskKind;
  auto stage_end = [&](std::initializer_list<TaskKind> kinds) {
    double end = 0;
    for (size_t i = 0; i < serial.graph.tasks.size(); ++i)
      if (std::find(kinds.begin(), kinds.end(), serial.graph.tasks[i].kind) != kinds.end())
        end = std::max(end, rs.tasks[i].end);
    return end;
  };
  double ssd_end = stage_end({TaskKind::dedup, TaskKind::ssd_read});
  double net_end = stage_end({TaskKind::pull, TaskKind::dram_load});
  double gpu_end = stage_end(
      {TaskKind::host_copy, TaskKind::gather, TaskKind::forward, TaskKind::dp, TaskKind::optimizer});
  std::vector<double> stages = {ssd_end, net_end - ssd_end, gpu_end - net_end, rs.makespan - gpu_end};
  for (double s : stages) ASSERT_GT(s, 0);
  EXPECT_NEAR(rp.makespan, *std::max_element(stages.begin(), stages.end()), 1e-6 * rp.makespan);
  EXPECT_LT(rp.makespan, 0.9 * rs.makespan);
}

TEST(ParameterServer, PrefetchCannotHideTheSharedSsd) {
  // Four servers, a small DRAM cache: SSD reads (load) and writes (dump) queue on the same SSD, so the
  // pipelined step is at least the SSD's busy time, yet shorter than load + train + dump in sequence.
  auto topo = podsim::testing::preset("gpu-ps-4node");
  Overrides sets = {{"training.minibatches_per_batch", "64"}, {"ps.dram_cache_GiB", "16"}};
  Overrides serial_sets = sets;
  serial_sets.push_back({"ps.pipeline", "false"});
  auto piped = driver::simulate(topo, *model_on(topo, sets));
  auto serial = driver::simulate(topo, *model_on(topo, serial_sets));
  ASSERT_EQ(piped.status, "ok");
  double ssd = 0;
  for (const auto& [k, v] : piped.plan.metrics)
    if (k == "ssd_busy_s") ssd = v;
  ASSERT_GT(ssd, 0);
  EXPECT_GE(piped.step_time(), ssd * (1 - 1e-9));
  EXPECT_LT(piped.step_time(), 0.9 * serial.step_time());
  // Where time went adds up, and the tiers show up as storage.
  EXPECT_NEAR(piped.mean.total(), piped.step_time(), 1e-9 * piped.step_time());
  EXPECT_GT(piped.mean[Category::storage], 0);
  EXPECT_GT(piped.mean[Category::compute], 0);
}

// ---- both machines, one workload file ------------------------------------------------------------------

TEST(ParameterServer, SameWorkloadRunsOnGpuAndCpuClusters) {
  driver::RunRequest gpu{podsim::testing::source_path("topologies/gpu-ps-4node.yaml"),
                         podsim::testing::source_path(kWorkload),
                         {}};
  auto g = driver::simulate(gpu);
  ASSERT_EQ(g.status, "ok") << g.status_detail;
  EXPECT_GT(g.samples_per_s(), 0);
  EXPECT_EQ(g.plan.tokens_per_step, 0);
  EXPECT_GT(g.search_log.size(), 1u);  // minibatches_per_batch: auto tried several batch sizes
  EXPECT_GT(g.mean[Category::stream], 0);

  driver::RunRequest cpu{podsim::testing::source_path("topologies/cpu-mpi-cluster.yaml"),
                         podsim::testing::source_path(kWorkload),
                         {}};
  auto c = driver::simulate(cpu);
  ASSERT_EQ(c.status, "ok") << c.status_detail;
  EXPECT_EQ(c.devices(), 150);
  EXPECT_GT(c.samples_per_s(), 0);
  EXPECT_EQ(c.mean[Category::storage], 0);  // no SSD or HBM tier on the CPU cluster
  EXPECT_GT(c.mean[Category::compute], 0.3 * c.step_time());

  // Too few CPU servers cannot hold the table in DRAM: reported, not an error.
  driver::RunRequest small = cpu;
  small.sets = {"topology.nodes=40"};
  auto s = driver::simulate(small);
  EXPECT_EQ(s.status, "out_of_memory");
  EXPECT_NE(s.status_detail.find("at least"), std::string::npos) << s.status_detail;
}

TEST(ParameterServer, MoreServersAndSteeperPopularityAreFaster) {
  auto run = [](const std::string& topo, std::vector<std::string> sets) {
    driver::RunRequest r{podsim::testing::source_path("topologies/" + topo + ".yaml"),
                         podsim::testing::source_path(kWorkload), std::move(sets)};
    return driver::simulate(r).samples_per_s();
  };
  EXPECT_GT(run("cpu-mpi-cluster", {"topology.nodes=300"}),
            1.5 * run("cpu-mpi-cluster", {"topology.nodes=150"}));
  std::vector<std::string> fixed = {"workload.training.minibatches_per_batch=256"};
  auto steep = fixed;
  steep.push_back("workload.model.zipf_exponent=1.3");
  EXPECT_GT(run("gpu-ps-4node", steep), run("gpu-ps-4node", fixed));
}

// ---- bad input ------------------------------------------------------------------------------------------

TEST(ParameterServer, BadInputNamesTheField) {
  auto gpu = podsim::testing::preset("gpu-ps-4node");
  std::string e = model_error(gpu, {{"ps.dram_cache_GiB", "4096"}});
  EXPECT_NE(e.find("ps.dram_cache_GiB"), std::string::npos) << e;
  EXPECT_NE(e.find("larger than its tier"), std::string::npos) << e;
  EXPECT_NE(e.find("1024 GiB"), std::string::npos) << e;
  e = model_error(gpu, {{"model.zipf_exponent", "-0.5"}});
  EXPECT_NE(e.find("model.zipf_exponent"), std::string::npos) << e;
  EXPECT_NE(e.find("must be 0"), std::string::npos) << e;
  e = model_error(gpu, {{"model.embedding.dimension", "0"}});
  EXPECT_NE(e.find("model.embedding.dimension"), std::string::npos) << e;
  EXPECT_NE(e.find("at least 1"), std::string::npos) << e;
  // Issue 11: sizes narrowed to int wrapped around (dimension 1e9); they have ranges now.
  e = model_error(gpu, {{"model.embedding.dimension", "1e9"}});
  EXPECT_NE(e.find("model.embedding.dimension"), std::string::npos) << e;
  EXPECT_NE(e.find("at most 65536"), std::string::npos) << e;
  e = model_error(gpu, {{"model.embedding.dimension", "65536"}, {"model.slots", "65536"}});
  EXPECT_NE(e.find("model.slots"), std::string::npos) << e;
  EXPECT_NE(e.find("MLP input"), std::string::npos) << e;
  e = model_error(gpu, {{"training.batch_per_gpu", "4294967296"}});
  EXPECT_NE(e.find("training.batch_per_gpu"), std::string::npos) << e;
  e = model_error(gpu, {{"model.mlp_hidden", "[1e12]"}});
  EXPECT_NE(e.find("model.mlp_hidden"), std::string::npos) << e;
  e = model_error(gpu, {{"training.precision", "bf16"}});
  EXPECT_NE(e.find("training.precision"), std::string::npos) << e;  // a V100 has no bf16 peak
  EXPECT_NE(e.find("fp16"), std::string::npos) << e;
  e = model_error(gpu, {{"model.embedding.features", "1.5"}});
  EXPECT_NE(e.find("model.embedding.features"), std::string::npos) << e;
  e = model_error(gpu, {{"model.nonzeros_per_example", "10"}});
  EXPECT_NE(e.find("model.nonzeros_per_example"), std::string::npos) << e;
  // A GPU cluster without host DRAM and SSD specs cannot run the hierarchical parameter server.
  e = model_error(podsim::testing::preset("dgx-a100-superpod", {{"nodes", "4"}}), {});
  EXPECT_NE(e.find("host_memory_GiB"), std::string::npos) << e;
  // Working sets that do not fit are reported, with what to change.
  auto model = model_on(gpu, {{"training.minibatches_per_batch", "100000"}});
  try {
    model->build(0);
    FAIL() << "a working set larger than HBM was accepted";
  } catch (const InfeasibleConfig& ex) {
    EXPECT_EQ(ex.status(), "out_of_memory");
    EXPECT_NE(std::string(ex.what()).find("minibatches_per_batch"), std::string::npos) << ex.what();
  }
}

// ---- topology families --------------------------------------------------------------------------------

TEST(GpuCluster, HostDramAndSsdAreOptionalKeys) {
  auto ps = podsim::testing::preset("gpu-ps-4node");
  EXPECT_TRUE(ps.host.has_memory());
  EXPECT_TRUE(ps.host.has_ssd());
  EXPECT_NEAR(ps.host.ssd_read_iops, 3.92e6, 1);
  EXPECT_NEAR(ps.host.pcie_bandwidth, 12e9, 1);
  auto dgx = podsim::testing::preset("dgx-a100-superpod", {{"nodes", "2"}});
  EXPECT_FALSE(dgx.host.has_memory());  // presets without the keys load as before
  EXPECT_FALSE(dgx.host.has_ssd());
  try {
    podsim::testing::preset("dgx-a100-superpod", {{"nodes", "2"}, {"node.ssd_TB", "8"}});
    FAIL() << "an SSD without bandwidth and IOPS was accepted";
  } catch (const InputError& ex) {
    EXPECT_NE(std::string(ex.what()).find("node.ssd_bandwidth_GBps"), std::string::npos) << ex.what();
  }
}

TEST(CpuCluster, RacksUnderOneSpine) {
  auto topo = podsim::testing::preset("cpu-mpi-cluster");
  EXPECT_EQ(topo.device_count(), 150);
  auto roles = topo.role_counts();
  EXPECT_EQ(roles["device"], 150);  // one device per server: the CPUs and their DRAM
  EXPECT_EQ(roles["leaf"], 4);      // racks of 40
  EXPECT_EQ(roles["spine"], 1);
  EXPECT_EQ(topology::connected_components(topo), 1);
  EXPECT_TRUE(topology::check_routes(topo, 40).empty());
  topology::Route r;
  topo.router().route(topo.device_vertex[0], topo.device_vertex[39], r);
  EXPECT_EQ(r.size(), 2u);  // same rack
  r.clear();
  topo.router().route(topo.device_vertex[0], topo.device_vertex[149], r);
  EXPECT_EQ(r.size(), 4u);
  EXPECT_EQ(topo.links[r[0].link].cls, topology::LinkClass::ethernet);
  // The device is the whole server: its memory is its DRAM.
  EXPECT_NEAR(topo.device.hbm_bytes, 192 * 1073741824.0, 1);
  EXPECT_EQ(topo.device.sm_count, 40);
  auto star = podsim::testing::preset("cpu-mpi-cluster", {{"network.kind", "star"}, {"nodes", "8"}});
  EXPECT_EQ(star.role_counts()["switch"], 1);
  EXPECT_THROW(podsim::testing::preset("cpu-mpi-cluster", {{"network.link", "carrier_pigeon"}}), InputError);
  EXPECT_THROW(podsim::testing::preset("cpu-mpi-cluster", {{"network.rack_nodes", "0"}}), InputError);
}
