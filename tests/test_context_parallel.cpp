// Context parallelism (parallel.cp: ring attention and the all-gather variant) and the tensor-parallel
// overlap (parallel.tp_overlap): rank order, per-rank work, bytes on the wire, and exposed time against
// the closed form of the overlap.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "podsim/core/error.hpp"
#include "podsim/driver/simulation.hpp"
#include "podsim/network/link_load.hpp"
#include "podsim/report/summary_text.hpp"
#include "podsim/report/writers.hpp"
#include "podsim/workload/parallel_layout.hpp"
#include "podsim/workload/transformer/context_parallel.hpp"
#include "podsim/workload/transformer/megatron_builder.hpp"
#include "podsim/workload/transformer/memory_model.hpp"
#include "podsim/workload/transformer/transformer_loader.hpp"
#include "podsim/workload/workload_model.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::workload;

namespace {

// Llama-like in the GPT-style keys: hidden 4096, 32 heads, ffn 14336, 128k vocabulary, 8k context,
// 8 layers to keep the simulation small.
Overrides llama_like(Overrides extra = {}) {
  Overrides o = {{"model.layers", "8"},
                 {"model.hidden", "4096"},
                 {"model.heads", "32"},
                 {"model.ffn_hidden", "14336"},
                 {"model.seq_len", "8192"},
                 {"model.vocab", "128256"},
                 {"parallel.tp", "8"},
                 {"parallel.pp", "1"},
                 {"parallel.dp", "1"},
                 {"parallel.cp", "2"},
                 {"parallel.schedule", "1f1b"},
                 {"parallel.virtual_stages", "1"},
                 {"parallel.sequence_parallel", "true"},
                 {"parallel.dp_overlap", "false"},
                 {"training.global_batch", "4"},
                 {"training.micro_batch", "1"},
                 {"training.precision", "bf16"},
                 {"training.recompute", "selective"},
                 // These tests count the unfused kernels one by one (the flash path is one kernel,
                 // tests/test_flash_attention.cpp).
                 {"training.attention", "unfused"}};
  o.insert(o.end(), extra.begin(), extra.end());
  return o;
}

const std::string kWorkload = "workloads/gpt3-175b.yaml";

// The overlap closed forms below are checked without the compute slowdown under overlapped communication
// (CpOverlap.CommunicationBesideComputeSlowsIt checks that part).
topology::Topology h100(topology::Overrides sets = {{"nodes", "2"}}, double overlap_slowdown = 1) {
  auto topo = podsim::testing::preset("dgx-h100-superpod", sets);
  topo.device_profile.overlap_compute_slowdown = overlap_slowdown;
  return topo;
}

WorkloadConfig config(const topology::Topology& topo, Overrides extra = {}) {
  return load_workload(podsim::testing::source_path(kWorkload), llama_like(extra), topo);
}

report::RunResult run(const topology::Topology& topo, Overrides extra = {}) {
  auto model = load_workload_model(podsim::testing::source_path(kWorkload), llama_like(extra), topo);
  return driver::simulate(topo, *model);
}

double kernel_flops(const StepPlan& plan, const std::string& group, const std::string& name) {
  for (const auto& k : plan.kernels)
    if (k.group == group && k.name == name) return k.flops;
  ADD_FAILURE() << "no kernel " << group << " / " << name;
  return 0;
}

double phase_seconds(const topology::Topology& topo, const plan::CommPlan& p) {
  double t = 0;
  for (const auto& phase : p) t += network::idle_phase_cost(topo, phase).total();
  return t;
}

// The closed form of a step's exposed `category` comm on a single-stage job where nothing else shares
// its links: tasks with a plan on the device's compute stream expose all of it; a transfer on the
// overlap stream (added right after the compute task it runs beside) exposes what it takes beyond it.
double expected_exposed(const topology::Topology& topo, const plan::TaskGraph& g, plan::Category category) {
  double exposed = 0;
  for (size_t i = 0; i < g.tasks.size(); ++i) {
    const auto& t = g.tasks[i];
    if (t.plan < 0 || t.comm_category != category || t.stream < 0) continue;
    double comm = phase_seconds(topo, g.plans[t.plan]);
    if (g.streams[t.stream].device_busy)
      exposed += comm;
    else if (g.streams[t.stream].name.find("overlapped") != std::string::npos)
      exposed += std::max(0.0, comm - g.tasks[i - 1].compute_seconds);
  }
  return exposed;
}

// Bytes device `device` sends in the plans of the first microbatch's `kind` pass charged to `category`.
double bytes_sent(const plan::TaskGraph& g, int device, plan::TaskKind kind, plan::Category category) {
  double bytes = 0;
  for (const auto& t : g.tasks)
    if (t.plan >= 0 && t.kind == kind && t.microbatch == 0 && t.comm_category == category)
      for (const auto& phase : g.plans[t.plan])
        for (const auto& f : phase.flows)
          if (f.src == device) bytes += f.bytes;
  return bytes;
}

}  // namespace

TEST(ContextParallel, RankOrderIsTpThenCpThenDpThenPp) {
  ParallelLayout l{.tp = 8, .pp = 2, .dp = 2, .cp = 2};
  EXPECT_EQ(l.devices(), 64);
  EXPECT_EQ(l.device(3, 1, 0, 0), 11);  // the CP peer of rank 3 is right after its TP group
  EXPECT_EQ(l.device(0, 0, 1, 0), 16);
  EXPECT_EQ(l.device(0, 0, 0, 1), 32);
  EXPECT_EQ(l.cp_group(0, 0, 0), (std::vector<int>{0, 8}));
  EXPECT_EQ(l.cp_group(5, 1, 1), (std::vector<int>{53, 61}));
  EXPECT_EQ(l.tp_group(1, 0, 0), (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(l.dp_group(0, 1, 0), (std::vector<int>{8, 24}));
  // Gradients: every rank with the same weights, the dp x cp ranks of (tp 3, stage 1).
  EXPECT_EQ(l.grad_group(3, 1), (std::vector<int>{35, 43, 51, 59}));
  ParallelLayout plain{.tp = 4, .pp = 2, .dp = 3};  // cp = 1: Megatron's old order, unchanged
  EXPECT_EQ(plain.device(1, 0, 2, 1), 1 + 4 * (2 + 3 * 1));
  EXPECT_EQ(plain.grad_group(1, 1), plain.dp_group(1, 0, 1));
  // parallel.rank_order: tp-cp-pp-dp (Megatron-LM --use-tp-pp-dp-mapping, Llama 3's [TP, CP, PP, DP]): a
  // model replica's tp x cp x pp = 32 ranks are contiguous; data-parallel peers are 32 apart.
  ParallelLayout replica{.tp = 8, .pp = 2, .dp = 2, .cp = 2, .pp_before_dp = true};
  EXPECT_EQ(replica.device(3, 1, 0, 0), 11);
  EXPECT_EQ(replica.device(0, 0, 0, 1), 16);
  EXPECT_EQ(replica.device(0, 0, 1, 0), 32);
  EXPECT_EQ(replica.dp_group(0, 1, 0), (std::vector<int>{8, 40}));
  EXPECT_EQ(replica.grad_group(3, 1), (std::vector<int>{19, 27, 51, 59}));
  std::vector<int> all;
  for (int d = 0; d < 2; ++d)
    for (int s = 0; s < 2; ++s)
      for (int c = 0; c < 2; ++c)
        for (int t = 0; t < 8; ++t) all.push_back(replica.device(t, c, d, s));
  std::sort(all.begin(), all.end());
  for (int i = 0; i < 64; ++i) EXPECT_EQ(all[i], i);  // every device once
}

// HSDP (shard_dp data-parallel ranks per shard group): a gradient group of dp x cp ranks splits into
// consecutive shard groups of shard_dp x cp ranks (a rank's context-parallel peers shard along with it), and
// replica group j holds the j-th rank of every shard group; without HSDP the whole gradient group is one.
TEST(ContextParallel, ShardGroupsSplitTheGradientGroup) {
  ParallelLayout l{.tp = 2, .pp = 2, .dp = 4, .cp = 2, .shard_dp = 2};
  std::vector<int> grads = l.grad_group(1, 1);  // 8 ranks, cp fastest
  ASSERT_EQ(grads.size(), 8u);
  EXPECT_EQ(l.shard_ranks(), 4);
  EXPECT_EQ(l.shard_groups(), 2);
  EXPECT_EQ(l.shard_group(1, 1, 0), std::vector<int>(grads.begin(), grads.begin() + 4));
  EXPECT_EQ(l.shard_group(1, 1, 1), std::vector<int>(grads.begin() + 4, grads.end()));
  EXPECT_EQ(l.replica_group(1, 1, 3), (std::vector<int>{grads[3], grads[7]}));
  for (int i = 0; i < 8; ++i) EXPECT_EQ(l.shard_index(grads[static_cast<size_t>(i)]), i / 4);
  ParallelLayout whole{.tp = 2, .pp = 2, .dp = 4, .cp = 2};
  EXPECT_EQ(whole.shard_groups(), 1);
  EXPECT_EQ(whole.shard_group(1, 1, 0), grads);
  EXPECT_EQ(whole.shard_index(grads.back()), 0);
}

// position() and expert_position() invert device() and expert_device() in both rank orders (the plan bound
// finds a rank's groups from them).
TEST(ContextParallel, PositionsInvertTheRankOrder) {
  for (bool pp_before_dp : {false, true})
    for (auto [ep, etp] : {std::pair{4, 4}, std::pair{8, 2}, std::pair{16, 1}}) {
      ParallelLayout l{
          .tp = 4, .pp = 3, .dp = 4, .cp = 4, .pp_before_dp = pp_before_dp, .etp = etp, .ep = ep};
      if (pp_before_dp && ep * etp != l.tp * l.cp) continue;  // Megatron-Core's rule (transformer_config.cpp)
      for (int s = 0; s < l.pp; ++s)
        for (int d = 0; d < l.dp; ++d)
          for (int c = 0; c < l.cp; ++c)
            for (int t = 0; t < l.tp; ++t) {
              auto at = l.position(l.device(t, c, d, s));
              EXPECT_EQ(std::vector<int>({at.tp_rank, at.cp_rank, at.dp_rank, at.pp_rank}),
                        std::vector<int>({t, c, d, s}));
            }
      for (int s = 0; s < l.pp; ++s)
        for (int d = 0; d < l.expert_dp(); ++d)
          for (int e = 0; e < ep; ++e)
            for (int t = 0; t < etp; ++t) {
              int device = l.expert_device(s, t, e, d);
              auto at = l.expert_position(device);
              EXPECT_EQ(std::vector<int>({at.etp_rank, at.ep_rank, at.edp_rank, l.position(device).pp_rank}),
                        std::vector<int>({t, e, d, s}))
                  << pp_before_dp << " ep " << ep;
            }
    }
}

TEST(ContextParallel, CausalLoadBalancingGivesEveryRankAndStepTheSameWork) {
  for (int cp = 1; cp <= 8; ++cp) {
    double total = 0;
    for (int rank = 0; rank < cp; ++rank) {
      double mine = 0;
      for (int step = 0; step < cp; ++step) {
        EXPECT_DOUBLE_EQ(cp_causal_block_work(cp, rank, step), 2) << cp << " " << rank << " " << step;
        mine += cp_causal_block_work(cp, rank, step);
      }
      EXPECT_DOUBLE_EQ(mine, 2.0 * cp);
      total += mine;
    }
    // The causal triangle of 2cp x 2cp chunk pairs, diagonal halved: (2cp)^2 / 2; each rank has 1/cp.
    EXPECT_DOUBLE_EQ(total, 2.0 * cp * cp);
  }
}

TEST(ContextParallel, EveryRankHoldsSeqLenOverCpTokens) {
  auto topo = h100();
  auto one = describe_megatron_step(topo, config(topo, {{"parallel.cp", "1"}, {"parallel.dp", "2"}}), 1, 1);
  auto two = describe_megatron_step(topo, config(topo), 1, 1);
  for (const char* gemm : {"QKV projection", "MLP fc1", "MLP fc2", "attention output projection"})
    EXPECT_DOUBLE_EQ(kernel_flops(two, "layer forward", gemm), kernel_flops(one, "layer forward", gemm) / 2);
  // Attention: the rank's s/cp queries against the whole sequence's keys.
  double s = 8192, d = 128, heads = 32 / 8;
  EXPECT_DOUBLE_EQ(kernel_flops(two, "layer forward", "attention scores (QK^T)"),
                   2 * (s / 2) * s * d * heads);
  EXPECT_DOUBLE_EQ(kernel_flops(two, "layer forward", "attention scores (QK^T)"),
                   kernel_flops(one, "layer forward", "attention scores (QK^T)") / 2);
  EXPECT_DOUBLE_EQ(kernel_flops(two, "output layer forward", "logits"),
                   kernel_flops(one, "output layer forward", "logits") / 2);
  // The job's FLOPs are the job's, whatever splits it.
  EXPECT_DOUBLE_EQ(two.model_flops, one.model_flops);
  // Activations scale with the tokens held (the attention term with them: s/cp queries x s keys).
  for (Recompute r : {Recompute::none, Recompute::selective, Recompute::full})
    EXPECT_DOUBLE_EQ(
        layer_activation_bytes(config(topo), 1, r),
        layer_activation_bytes(config(topo, {{"parallel.cp", "1"}, {"parallel.dp", "2"}}), 1, r) / 2);
}

TEST(ContextParallel, RingBytesPerLayerAndStep) {
  auto topo = h100({{"nodes", "4"}});
  auto w = config(topo, {{"parallel.cp", "4"}});
  double kv = 2 * 1 * (8192.0 / 4) * (32 / 8) * 128 * 2;  // K and V, s/cp tokens, 4 heads of 128, bf16
  EXPECT_DOUBLE_EQ(cp_kv_block_bytes(w, 1), kv);
  EXPECT_DOUBLE_EQ(cp_kv_block_bytes(w, 2), 2 * kv);
  EXPECT_EQ(cp_ring_steps(w), 3);
  EXPECT_DOUBLE_EQ(cp_ring_step_bytes(w, 1, CpPass::forward), kv);
  EXPECT_DOUBLE_EQ(cp_ring_step_bytes(w, 1, CpPass::backward), 2 * kv);  // KV and dKV
  EXPECT_DOUBLE_EQ(cp_ring_step_bytes(w, 1, CpPass::recompute), kv);     // selective redoes attention
  auto none = config(topo, {{"parallel.cp", "4"}, {"training.recompute", "none"}});
  EXPECT_DOUBLE_EQ(cp_ring_step_bytes(none, 1, CpPass::recompute), 0);
  EXPECT_TRUE(cp_gather_collectives(w, 1, CpPass::forward).empty());  // ring: no collectives
  EXPECT_DOUBLE_EQ(cp_buffer_bytes(w, 1), 4 * kv);
}

// Grouped-query attention passes only the query groups' K and V around the ring (Megatron-Core exchanges
// them before expanding them to the query heads); multi-head latent attention every head's up-projected
// key and value; under fp8 the blocks stay in bf16 (only the linear layers' GEMMs are quantized).
TEST(ContextParallel, RingBlocksAreTheKeyValueHeadsThatExist) {
  auto topo = h100({{"nodes", "4"}});
  auto gqa = config(topo, {{"parallel.cp", "4"}, {"model.kv_heads", "8"}});
  double tokens = 8192.0 / 4;
  EXPECT_DOUBLE_EQ(cp_kv_block_bytes(gqa, 1), 2 * tokens * (8 / 8) * 128 * 2);  // one group per tp rank
  auto mha = config(topo, {{"parallel.cp", "4"}});
  EXPECT_DOUBLE_EQ(cp_kv_block_bytes(mha, 1) / cp_kv_block_bytes(gqa, 1), 4.0);  // 32 heads vs 8 groups
  auto fp8 = config(topo, {{"parallel.cp", "4"}, {"model.kv_heads", "8"}, {"training.precision", "fp8"}});
  EXPECT_DOUBLE_EQ(cp_kv_block_bytes(fp8, 1), cp_kv_block_bytes(gqa, 1));
  WorkloadConfig mla = mha;
  mla.model.attention_type = AttentionType::mla;
  mla.model.qk_nope_head_dim = 128;
  mla.model.qk_rope_head_dim = 64;
  mla.model.v_head_dim = 128;
  EXPECT_DOUBLE_EQ(cp_kv_block_bytes(mla, 1), tokens * (32 / 8) * (128 + 64 + 128) * 2);
}

TEST(ContextParallel, GraphCarriesRingAndAllGatherBytes) {
  auto topo = h100({{"nodes", "4"}});
  const double L = 8, cp = 4;
  for (const char* algorithm : {"ring", "all_gather"}) {
    auto w = config(topo, {{"parallel.cp", "4"}, {"parallel.cp_algorithm", algorithm}});
    double kv = cp_kv_block_bytes(w, 1);
    auto plan = build_megatron_step(topo, w, 1, 1);
    // Forward: per layer cp-1 KV blocks leave each rank, around the ring or through the all-gather.
    EXPECT_NEAR(bytes_sent(plan.graph, 0, TaskKind::forward, Category::cp), L * (cp - 1) * kv, 1e-6 * kv)
        << algorithm;
    // Backward (selective recomputation redoes attention): ring KV again + KV and dKV; all-gather again
    // + the reduce-scatter of dK, dV.
    double backward = std::string(algorithm) == "ring" ? 3 : 2;
    EXPECT_NEAR(bytes_sent(plan.graph, 0, TaskKind::backward, Category::cp), backward * L * (cp - 1) * kv,
                1e-6 * kv)
        << algorithm;
    // Every CP rank sends, across nodes (cp ranks are 8 devices apart).
    EXPECT_GT(bytes_sent(plan.graph, 24, TaskKind::forward, Category::cp), 0);
  }
  auto all_gather = config(topo, {{"parallel.cp", "4"}, {"parallel.cp_algorithm", "all_gather"}});
  auto c = cp_gather_collectives(all_gather, 1, CpPass::forward);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].kind, network::CollectiveKind::all_gather);
  EXPECT_DOUBLE_EQ(c[0].bytes, cp * cp_kv_block_bytes(all_gather, 1));
  auto none = config(
      topo, {{"parallel.cp", "4"}, {"parallel.cp_algorithm", "all_gather"}, {"training.recompute", "none"}});
  EXPECT_EQ(cp_gather_collectives(none, 1, CpPass::backward).size(), 2u);  // re-gather + reduce-scatter
}

TEST(ContextParallel, RingExposesOnlyWhatTransfersTakeBeyondTheirBlocks) {
  // Fast rails: every KV block arrives while the previous block computes.
  auto fast = h100();
  auto r = run(fast);
  ASSERT_EQ(r.status, "ok");
  EXPECT_DOUBLE_EQ(r.mean[Category::cp], 0);
  EXPECT_DOUBLE_EQ(expected_exposed(fast, r.plan.graph, Category::cp), 0);
  EXPECT_GT(bytes_sent(r.plan.graph, 0, TaskKind::forward, Category::cp), 0);
  // 10 Gb/s rails: the transfers dominate; what shows is sum(max(0, transfer - block)).
  auto slow = h100({{"nodes", "2"}, {"node.nic_bandwidth_Gbps", "10"}});
  auto s = run(slow);
  ASSERT_EQ(s.status, "ok");
  double expected = expected_exposed(slow, s.plan.graph, Category::cp);
  EXPECT_GT(expected, 0.1 * s.step_time());
  EXPECT_NEAR(s.mean[Category::cp], expected, 1e-6 * expected);
  // What hides the transfers: cp-1 of the cp equal attention blocks of every layer.
  auto w = config(slow);
  calibration::ComputeModel cm(slow.device_profile, {.peak_flops = slow.device.peak(w.training.precision),
                                                     .hbm_bandwidth = slow.device.hbm_bandwidth,
                                                     .sm_count = slow.device.sm_count,
                                                     .element_bytes = 2});
  LayerCosts layer = layer_costs(w, 1, cm);
  ASSERT_GT(layer.forward.attention_seconds, 0);
  ASSERT_LT(layer.forward.attention_seconds, layer.forward.seconds);
  double hidden = 0;
  const auto& graph = s.plan.graph;
  for (size_t i = 1; i < graph.tasks.size(); ++i)
    if (graph.tasks[i].comm_category == Category::cp && graph.tasks[i].kind == TaskKind::forward &&
        graph.tasks[i].microbatch == 0 && !graph.streams[graph.tasks[i].stream].device_busy)
      hidden += graph.tasks[i - 1].compute_seconds;
  EXPECT_NEAR(hidden, 8 * layer.forward.attention_seconds / 2, 1e-12);
  // The all-gather variant hides nothing: all of its transfer time is exposed.
  auto g = run(slow, {{"parallel.cp_algorithm", "all_gather"}});
  double serial = expected_exposed(slow, g.plan.graph, Category::cp);
  EXPECT_NEAR(g.mean[Category::cp], serial, 1e-6 * serial);
  // Compute is the same work whatever moves the keys and values.
  EXPECT_NEAR(g.mean[Category::compute], s.mean[Category::compute], 1e-9 * s.mean[Category::compute]);
}

TEST(ContextParallel, GradientsAreReducedOverDataAndContextParallelRanks) {
  auto topo = h100();
  auto r = run(topo);  // dp 1, cp 2: the CP pair still all-reduces its gradients
  bool reduces = false;
  for (const auto& t : r.plan.graph.tasks)
    if (t.kind == TaskKind::dp && t.plan >= 0) {
      for (const auto& f : r.plan.graph.plans[t.plan][0].flows) reduces |= f.src == 0 && f.dst == 8;
    }
  EXPECT_TRUE(reduces);
  EXPECT_GT(r.mean[Category::dp], 0);
  // The distributed optimizer shards over dp x cp.
  auto w = config(topo, {{"parallel.zero", "1"}});
  auto mem = stage_memory(w, 1, 1, {1}, topo.device_profile);
  EXPECT_DOUBLE_EQ(mem[0].optimizer, 12 * stage_params(w, 0) / 2);
}

TEST(ContextParallel, LlamaLikeOnSuperpodShowsContextParallelComm) {
  auto topo = h100();
  auto r = run(topo, {{"model.layers", "32"}, {"training.global_batch", "8"}});
  ASSERT_EQ(r.status, "ok");
  EXPECT_NE(report::human_summary(r).find("exposed context-parallel comm"), std::string::npos);
  auto breakdown = report::breakdown_csv(r);
  EXPECT_NE(breakdown.find("cp_exposed_s"), std::string::npos);
  auto row = report::summary_row(r);
  auto value = [&](const std::string& col) {
    for (const auto& [k, v] : row)
      if (k == col) return v;
    return std::string("missing");
  };
  EXPECT_EQ(value("cp"), "2");
  EXPECT_EQ(value("cp_algorithm"), "ring");
  EXPECT_NE(value("cp_exposed_s"), "missing");
  EXPECT_LT(r.mfu(), 1.0);
}

TEST(ContextParallel, LongSequencesKeepTheGraphSmall) {
  // 128k tokens over 16 CP ranks: the same tasks as 8k (steps and layers are folded), memory that fits.
  auto topo = h100({{"nodes", "16"}});
  Overrides big = {{"model.seq_len", "131072"},
                   {"parallel.cp", "16"},
                   {"training.recompute", "full"},
                   {"parallel.zero", "1"}};
  auto r = run(topo, big);
  ASSERT_EQ(r.status, "ok") << r.status_detail;
  big[0].second = "8192";
  auto short_seq = run(topo, big);
  EXPECT_EQ(r.plan.graph.tasks.size(), short_seq.plan.graph.tasks.size());
  EXPECT_LT(r.memory_per_device(), topo.device.hbm_bytes);
}

TEST(TpOverlap, HidesTensorParallelCollectivesBehindTheirGemms) {
  auto topo = h100({{"nodes", "1"}});
  Overrides base = {{"parallel.cp", "1"}};
  auto serial = run(topo, base);
  base.push_back({"parallel.tp_overlap", "true"});
  auto overlapped = run(topo, base);
  ASSERT_EQ(overlapped.status, "ok");
  EXPECT_LT(overlapped.mean[Category::tp], serial.mean[Category::tp]);
  // The last pipelined chunk of each reduce-scatter stays exposed.
  EXPECT_GT(overlapped.mean[Category::tp], 0);
  double expected = expected_exposed(topo, overlapped.plan.graph, Category::tp);
  EXPECT_NEAR(overlapped.mean[Category::tp], expected, 1e-6 * expected);
  // The GEMMs it overlaps run in chunks and on the SMs the communication leaves (test_tp_overlap.cpp):
  // slower, but not by more than the SMs the defaults hold (16 of 132) and the chunks' wave tails.
  EXPECT_GT(overlapped.mean[Category::compute], serial.mean[Category::compute]);
  EXPECT_LT(overlapped.mean[Category::compute], 1.3 * serial.mean[Category::compute]);
}

TEST(TpOverlap, NeedsSequenceParallelismAndIsIgnoredBeforeHopper) {
  auto topo = h100({{"nodes", "1"}});
  auto err = podsim::testing::error_of([&] {
    config(topo,
           {{"parallel.cp", "1"}, {"parallel.tp_overlap", "true"}, {"parallel.sequence_parallel", "false"}});
  });
  EXPECT_NE(err.find("tp_overlap"), std::string::npos) << err;
  EXPECT_NE(err.find("sequence_parallel"), std::string::npos) << err;
  auto a100 = podsim::testing::preset("dgx-a100-superpod", {{"nodes", "1"}});
  auto r = run(a100, {{"parallel.cp", "1"}, {"parallel.tp_overlap", "true"}, {"training.precision", "fp16"}});
  bool noted = false;
  for (const auto& n : r.plan.notes) noted |= n.find("tp_overlap ignored") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(ContextParallel, BadInputIsAClearError) {
  auto topo = h100();
  auto three = h100({{"nodes", "3"}});
  auto err = podsim::testing::error_of([&] { config(three, {{"parallel.cp", "3"}}); });
  EXPECT_NE(err.find("2*cp"), std::string::npos) << err;
  EXPECT_NE(err.find("seq_len"), std::string::npos) << err;
  EXPECT_NE(err.find("does not even divide"), std::string::npos) << err;
  // cp = 2 divides 8190, but the 2*cp = 4 load-balanced chunks do not.
  err = podsim::testing::error_of([&] { config(topo, {{"model.seq_len", "8190"}}); });
  EXPECT_NE(err.find("2*cp = 4 must divide seq_len 8190"), std::string::npos) << err;
  EXPECT_EQ(err.find("does not even divide"), std::string::npos) << err;
  err = podsim::testing::error_of([&] { config(topo, {{"parallel.cp", "4"}, {"parallel.dp", "1"}}); });
  EXPECT_NE(err.find("tp*cp*pp*dp"), std::string::npos) << err;
  err = podsim::testing::error_of([&] { config(topo, {{"parallel.cp_algorithm", "allgather"}}); });
  EXPECT_NE(err.find("all_gather"), std::string::npos) << err;
  // dp: auto leaves room for the CP ranks: 16 devices / (tp 8 x cp 2) = 1.
  EXPECT_EQ(config(topo, {{"parallel.dp", "auto"}}).parallel.dp, 1);
}

TEST(ContextParallel, PipelineTransfersCarryEveryCpRanksTokens) {
  auto topo = h100({{"nodes", "4"}});
  auto w = config(topo, {{"parallel.pp", "2"}, {"model.layers", "4"}});
  auto plan = build_megatron_step(topo, w, 1, 1);
  ParallelLayout l{.tp = 8, .pp = 2, .dp = 1, .cp = 2};
  bool found = false;
  for (const auto& t : plan.graph.tasks) {
    if (t.kind != TaskKind::transfer || t.peer_stage != 0) continue;
    const auto& flows = plan.graph.plans[t.plan][0].flows;
    ASSERT_EQ(flows.size(), 2u);  // one per CP rank (rank 0's rail; dp 1)
    EXPECT_EQ(flows[1].src, l.device(0, 1, 0, 0));
    EXPECT_EQ(flows[1].dst, l.device(0, 1, 0, 1));
    // Sequence parallel: each TP rank sends its 1/tp of the rank's s/cp tokens.
    EXPECT_DOUBLE_EQ(flows[1].bytes, 8192.0 / 2 * 4096 * 2 / 8);
    found = true;
    break;
  }
  EXPECT_TRUE(found);
}

TEST(CpOverlap, CommunicationBesideComputeSlowsIt) {
  // The ring's KV transfers and the TP overlap's collectives run beside compute on the same GPU: with the
  // profile's overlap_compute_slowdown (1.1 on H100) that compute takes longer, never more than 1.1x.
  auto plain = h100({{"nodes", "2"}}, 1);
  auto slowed = h100({{"nodes", "2"}}, 1.1);
  Overrides sets = {{"parallel.tp_overlap", "true"}};
  auto a = run(plain, sets), b = run(slowed, sets);
  EXPECT_GT(b.mean[Category::compute], a.mean[Category::compute]);
  EXPECT_LE(b.mean[Category::compute], 1.1 * a.mean[Category::compute] * (1 + 1e-9));
}
