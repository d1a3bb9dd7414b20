// Data-parallel sharding that communicates: ZeRO 0/1/2/3 bytes per step against closed forms, HSDP groups
// and memory, the overlapped parameter gather, the compute slowdown under overlapped communication, and
// the errors for settings that are refused.
#include <gtest/gtest.h>

#include <fstream>

#include "podsim/calibration/device_profile.hpp"
#include "podsim/core/error.hpp"
#include "podsim/driver/simulation.hpp"
#include "podsim/workload/pipeline_schedule.hpp"
#include "podsim/workload/transformer/megatron_builder.hpp"
#include "podsim/workload/transformer/memory_model.hpp"
#include "podsim/workload/transformer/moe_memory.hpp"
#include "podsim/workload/transformer/transformer_loader.hpp"
#include "podsim/workload/workload_model.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::workload;

namespace {

// 8 layers, hidden 2048, tp 1, pp 1 on 2 DGX A100s (dp 16), 2 microbatches of 1.
Overrides small(Overrides sets) {
  Overrides base = {{"model.layers", "8"},         {"model.hidden", "2048"},
                    {"model.heads", "16"},         {"model.ffn_hidden", "8192"},
                    {"parallel.tp", "1"},          {"parallel.pp", "1"},
                    {"parallel.schedule", "1f1b"}, {"training.global_batch", "32"},
                    {"training.micro_batch", "1"}};
  base.insert(base.end(), sets.begin(), sets.end());
  return base;
}

topology::Topology two_nodes() {
  return podsim::testing::preset("dgx-a100-superpod", {{"nodes", "2"}});
}

WorkloadConfig config(const topology::Topology& topo, Overrides sets) {
  return load_workload(podsim::testing::source_path("workloads/gpt3-175b.yaml"), small(std::move(sets)),
                       topo);
}

// Bytes device `rank` sends in the data-parallel tasks of the step (what every rank of a symmetric ring
// sends), and whether every such flow stays in `allowed` when given.
double dp_bytes_sent(const StepPlan& plan, int rank, const std::vector<int>& allowed = {}) {
  double bytes = 0;
  for (const auto& t : plan.graph.tasks) {
    if (t.kind != TaskKind::dp || t.plan < 0) continue;
    for (const auto& phase : plan.graph.plans[t.plan])
      for (const auto& f : phase.flows) {
        if (f.src != rank) continue;
        bytes += f.bytes;
        if (!allowed.empty()) {
          EXPECT_NE(std::find(allowed.begin(), allowed.end(), f.dst), allowed.end()) << "flow to " << f.dst;
        }
      }
  }
  return bytes;
}

StepPlan step(const topology::Topology& topo, const WorkloadConfig& w) {
  return build_megatron_step(topo, w, 1, 1);
}

// The small model with `sets` simulated on `topo`.
report::RunResult simulated(const topology::Topology& topo, const Overrides& sets) {
  auto model =
      load_workload_model(podsim::testing::source_path("workloads/gpt3-175b.yaml"), small(sets), topo);
  return driver::simulate(topo, *model);
}

}  // namespace

// ZeRO-3 / FSDP per rank and step: each microbatch gathers the parameters before its forward and again
// before its backward, 2 x params x bytes x (N-1)/N, and reduce-scatters the gradients,
// params x grad bytes x (N-1)/N.
TEST(Sharding, Zero3BytesPerStepMatchTheClosedForm) {
  auto topo = two_nodes();
  for (const char* overlap : {"true", "false"}) {
    auto w = config(topo, {{"parallel.zero", "3"}, {"parallel.dp_overlap", overlap}});
    ASSERT_EQ(w.parallel.dp, 16);
    double n = 16, m = 2, params = stage_params(w, 0), eb = 2, gb = w.training.grad_reduce_bytes;
    double expected = m * (2 * params * eb + params * gb) * (n - 1) / n;
    EXPECT_NEAR(dp_bytes_sent(step(topo, w), 0), expected, 1e-6 * expected) << "dp_overlap " << overlap;
  }
}

// ZeRO 0 all-reduces the gradients (2 (N-1)/N per rank); ZeRO 1 reduce-scatters them and all-gathers the
// updated parameters ((N-1)/N each), after the step or, with dp_overlap, under the first forward.
TEST(Sharding, Zero1ReduceScattersAndGathersWhatZero0AllReduces) {
  auto topo = two_nodes();
  auto zero0 = config(topo, {{"parallel.zero", "0"}, {"parallel.dp_overlap", "false"}});
  double n = 16, params = stage_params(zero0, 0), gb = zero0.training.grad_reduce_bytes, eb = 2;
  EXPECT_NEAR(dp_bytes_sent(step(topo, zero0), 0), 2 * params * gb * (n - 1) / n, 1e-3);
  for (const char* overlap : {"true", "false"}) {
    auto zero1 = config(topo, {{"parallel.zero", "1"}, {"parallel.dp_overlap", overlap}});
    EXPECT_NEAR(dp_bytes_sent(step(topo, zero1), 0), (params * gb + params * eb) * (n - 1) / n, 1e-3)
        << "dp_overlap " << overlap;
  }
}

// ZeRO-2 keeps only a shard of the gradients, so each microbatch's backward reduce-scatters them (Megatron-
// FSDP optim_grads, DeepSpeed ZeRO-2): m x params x grad bytes x (N-1)/N, then the updated parameters are
// gathered once, as with ZeRO 1. Without overlap those reductions are exposed, once per microbatch.
TEST(Sharding, Zero2ReduceScattersEveryMicrobatch) {
  auto topo = two_nodes();
  double exposed_zero1 = 0;
  for (const char* zero : {"1", "2"}) {
    for (const char* overlap : {"true", "false"}) {
      auto w = config(topo, {{"parallel.zero", zero}, {"parallel.dp_overlap", overlap}});
      double n = 16, m = std::string(zero) == "2" ? 2 : 1, params = stage_params(w, 0);
      double gb = w.training.grad_reduce_bytes, eb = 2;
      EXPECT_NEAR(dp_bytes_sent(step(topo, w), 0), (m * params * gb + params * eb) * (n - 1) / n, 1e-3)
          << "zero " << zero << " dp_overlap " << overlap;
      if (std::string(overlap) == "false") {
        auto r = simulated(topo, {{"parallel.zero", zero}, {"parallel.dp_overlap", "false"}});
        ASSERT_EQ(r.status, "ok") << r.status_detail;
        double exposed = r.mean[Category::dp];
        if (std::string(zero) == "1")
          exposed_zero1 = exposed;
        else
          EXPECT_GT(exposed, 1.5 * exposed_zero1);  // two reduce-scatters exposed instead of one
      }
    }
  }
}

// ZeRO-2 with a pipeline (the Llama 3 paper's FSDP beside pipeline parallelism): each chunk's backward
// reduce-scatters that chunk's gradients, so a stage sends m x its gradients per step, and gathers its
// updated parameters once; the step runs, and the gradients in memory are the shard.
TEST(Sharding, Zero2WithPipelineReduceScattersEveryChunkBackward) {
  auto topo = two_nodes();
  for (const char* overlap : {"true", "false"}) {
    Overrides sets = {{"parallel.zero", "2"}, {"parallel.pp", "2"}, {"parallel.dp_overlap", overlap}};
    auto w = config(topo, sets);
    ASSERT_EQ(w.parallel.dp, 8);
    double n = 8, m = 4, params = stage_params(w, 0), gb = w.training.grad_reduce_bytes, eb = 2;
    EXPECT_NEAR(dp_bytes_sent(step(topo, w), 0), (m * params * gb + params * eb) * (n - 1) / n, 1e-3)
        << "dp_overlap " << overlap;
    auto r = simulated(topo, sets);
    ASSERT_EQ(r.status, "ok") << r.status_detail;
    const auto& memory = r.plan.memory.front();  // stage 0
    EXPECT_NEAR(memory.gradients, params * w.training.main_grad_bytes / n, 1e-3 * memory.gradients);
  }
}

// ZeRO-3 beside a pipeline (FSDP wrapping each stage's layers, resharded after every forward, as
// torchtitan runs it with reshard_after_forward): every chunk pass of every microbatch gathers the chunk's
// parameters, every backward reduce-scatters its gradients, on each stage; with 8 virtual stages too.
TEST(Sharding, Zero3WithPipelineGathersEveryChunkPass) {
  auto topo = two_nodes();
  for (const char* v : {"1", "2"}) {
    for (const char* overlap : {"true", "false"}) {
      Overrides sets = {{"parallel.zero", "3"},
                        {"parallel.pp", "2"},
                        {"parallel.dp_overlap", overlap},
                        {"parallel.virtual_stages", v},
                        {"parallel.schedule", std::string(v) == "1" ? "1f1b" : "interleaved"}};
      auto w = config(topo, sets);
      ASSERT_EQ(w.parallel.dp, 8);
      double n = 8, m = 4, params = stage_params(w, 0), eb = 2, gb = w.training.grad_reduce_bytes;
      double expected = m * (2 * params * eb + params * gb) * (n - 1) / n;
      EXPECT_NEAR(dp_bytes_sent(step(topo, w), 0), expected, 1e-6 * expected) << v << " " << overlap;
      auto r = simulated(topo, sets);
      ASSERT_EQ(r.status, "ok") << r.status_detail;
      EXPECT_GT(r.mean[Category::dp], 0);
    }
  }
}

// reshard_after_forward: false (FSDP1's SHARD_GRAD_OP) keeps each unit gathered from its forward to its
// backward: one gather per microbatch instead of two, the reduce-scatter unchanged; alone, beside a
// pipeline with virtual stages, and with experts (gathered and reduced in their expert data-parallel
// group). Memory holds the stage's whole dense parameters gathered (and every MoE layer's experts), where
// resharding keeps two units.
TEST(Sharding, Zero3WithoutReshardGathersOncePerMicrobatch) {
  auto topo = two_nodes();
  for (const char* pp : {"1", "2"}) {
    for (const char* overlap : {"true", "false"}) {
      bool piped = std::string(pp) == "2";
      Overrides sets = {{"parallel.zero", "3"},
                        {"parallel.pp", pp},
                        {"parallel.dp_overlap", overlap},
                        {"parallel.reshard_after_forward", "false"}};
      if (piped) {
        sets.push_back({"parallel.virtual_stages", "2"});
        sets.push_back({"parallel.schedule", "interleaved"});
      }
      auto w = config(topo, sets);
      double n = w.parallel.dp, m = 32 / n, params = stage_params(w, 0), eb = 2,
             gb = w.training.grad_reduce_bytes;
      double expected = m * (params * eb + params * gb) * (n - 1) / n;
      EXPECT_NEAR(dp_bytes_sent(step(topo, w), 0), expected, 1e-6 * expected) << pp << " " << overlap;
      auto r = simulated(topo, sets);
      ASSERT_EQ(r.status, "ok") << r.status_detail;
      EXPECT_GT(r.mean[Category::dp], 0);
      auto kept = stage_memory(w, 1, piped ? 2 : 1, {1, 1}, topo.device_profile);
      w.parallel.reshard_after_forward = true;
      auto resharded = stage_memory(w, 1, piped ? 2 : 1, {1, 1}, topo.device_profile);
      EXPECT_NEAR(kept[0].buffers - resharded[0].buffers,
                  (params - zero3_gathered_params(w, 0)) * (1 - 1 / n) * eb, 1e-6 * params);
    }
  }
  // Resharding after the forward is what ZeRO-3 does with its gathers: below ZeRO-3 it is refused.
  std::string m = podsim::testing::error_of([&] {
    config(topo, {{"parallel.zero", "2"}, {"parallel.reshard_after_forward", "false"}});
  });
  EXPECT_NE(m.find("parallel.reshard_after_forward"), std::string::npos) << m;
  EXPECT_NE(m.find("zero is 2"), std::string::npos) << m;
}

// The word embedding's gradient is all-reduced between the first and the last stage only where both hold
// it (Megatron-Core finalize_model_grads: tied to the output layer, or MTP): the whole gradient, or under
// ZeRO-2/3 (Megatron-FSDP) each rank's shard. An untied model (Llama) has no such all-reduce.
TEST(Sharding, EmbeddingGradientSyncOnlyForASharedEmbedding) {
  auto topo = two_nodes();
  auto embedding_bytes = [&](const WorkloadConfig& w) {
    auto plan = step(topo, w);
    double bytes = -1;
    for (const auto& t : plan.graph.tasks) {
      if (t.kind != TaskKind::embedding_sync) continue;
      bytes = 0;
      for (const auto& phase : plan.graph.plans[t.plan])
        for (const auto& f : phase.flows)
          if (f.src == 0) bytes += f.bytes;
    }
    return bytes;  // -1: no embedding all-reduce in the step
  };
  Overrides piped = {{"parallel.pp", "2"}};
  auto tied = config(topo, piped);
  ASSERT_TRUE(tied.model.tied_embeddings);
  double whole = static_cast<double>(tied.model.vocab) * tied.model.hidden * tied.training.grad_reduce_bytes;
  EXPECT_NEAR(embedding_bytes(tied), whole, 1e-6 * whole);  // two ranks: each sends the whole gradient
  piped.push_back({"parallel.zero", "2"});
  auto sharded = config(topo, piped);
  EXPECT_NEAR(embedding_bytes(sharded), whole / sharded.parallel.dp, 1e-6 * whole);
  auto untied = config(topo, {{"parallel.pp", "2"}, {"model.tied_embeddings", "false"}});
  EXPECT_EQ(embedding_bytes(untied), -1);
}

// ZeRO-3 with experts: a MoE layer's routed experts are gathered (forward, backward) and reduce-scattered
// in the expert data-parallel group, as the dense units are in dp x cp, every microbatch. A small model of
// 4 MoE layers, 16 experts over ep 8 on 16 GPUs: expert data parallel 2.
TEST(Sharding, Zero3GathersAndReducesExpertsInTheirGroup) {
  auto topo = two_nodes();
  const std::string yaml =
      "name: t\nkind: transformer_lm\nmodel:\n  layers: 4\n  hidden: 1024\n  heads: 8\n  ffn_hidden: 4096\n"
      "  seq_len: 2048\n  vocab: 32000\n  mlp: swiglu\n  norm: rmsnorm\n  position_embedding: rope\n"
      "  tied_embeddings: false\n  linear_bias: false\nmoe:\n  experts: 16\n  top_k: 2\n  ffn_hidden: 2048\n"
      "parallel:\n  tp: 1\n  pp: 1\n  dp: 16\n  ep: 8\n  zero: 3\ntraining:\n  global_batch: 64\n"
      "  micro_batch: 1\n  precision: bf16\n";
  auto w = read_transformer_workload(ConfigNode::load_string(yaml, "w.yaml"), 16, 8);
  double n = 16, edp = 2, m = 4, eb = 2, gb = w.training.grad_reduce_bytes;
  double experts = expert_stage_params(w, 0), dense = stage_params(w, 0) - experts;
  ASSERT_GT(experts, 0);
  double expected = m * (2 * dense * eb + dense * gb) * (n - 1) / n +
                    m * (2 * experts * eb + experts * gb) * (edp - 1) / edp;
  EXPECT_NEAR(dp_bytes_sent(step(topo, w), 0), expected, 1e-6 * expected);
  // The other shards of the experts being computed are in memory beside the local one.
  auto memory = stage_memory(w, 1, 1, {1}, topo.device_profile);
  EXPECT_GE(memory[0].buffers, 2 * expert_params_per_layer(w) * (1 - 1 / edp) * eb);
  // Kept from the forward for the backward: one gather per microbatch, all 4 MoE layers' experts held.
  w.parallel.reshard_after_forward = false;
  double kept =
      m * (dense * eb + dense * gb) * (n - 1) / n + m * (experts * eb + experts * gb) * (edp - 1) / edp;
  EXPECT_NEAR(dp_bytes_sent(step(topo, w), 0), kept, 1e-6 * kept);
  auto held = stage_memory(w, 1, 1, {1}, topo.device_profile);
  EXPECT_NEAR(held[0].buffers - memory[0].buffers,
              (dense - zero3_gathered_params(
                           read_transformer_workload(ConfigNode::load_string(yaml, "w.yaml"), 16, 8), 0)) *
                      (1 - 1 / n) * eb +
                  2 * expert_params_per_layer(w) * (1 - 1 / edp) * eb,
              1e-6 * experts);
}

// HSDP: shard inside groups of 8 (here one server each), then all-reduce the 1/8 shard across the 2
// groups. Gathers and reduce-scatters stay inside the group; memory divides by 8, not by dp.
TEST(Sharding, HsdpShardsInsideTheGroupAndReducesAcrossGroups) {
  auto topo = two_nodes();
  auto w =
      config(topo, {{"parallel.zero", "3"}, {"parallel.shard_group", "8"}, {"parallel.dp_overlap", "true"}});
  double n = 8, groups = 2, m = 2, params = stage_params(w, 0), eb = 2, gb = w.training.grad_reduce_bytes;
  double inside = m * (2 * params * eb + params * gb) * (n - 1) / n;
  double across = m * 2 * (params * gb / n) * (groups - 1) / groups;
  auto plan = step(topo, w);
  EXPECT_NEAR(dp_bytes_sent(plan, 0), inside + across, 1e-6 * (inside + across));
  // Every data-parallel flow of rank 0 goes to its own server (the shard group) or to rank 8, the rank
  // holding the same shard in the other group.
  dp_bytes_sent(plan, 0, {1, 2, 3, 4, 5, 6, 7, 8});

  auto programs = build_schedule(Schedule::none, 1, 2, 1);
  auto mem = stage_memory(w, 1, 1, peak_in_flight(programs), topo.device_profile);
  EXPECT_DOUBLE_EQ(mem[0].optimizer, params * 12 / 8);
  EXPECT_DOUBLE_EQ(mem[0].weights, params * 2 / 8);
  auto whole = config(topo, {{"parallel.zero", "3"}});
  auto whole_mem = stage_memory(whole, 1, 1, peak_in_flight(programs), topo.device_profile);
  EXPECT_DOUBLE_EQ(whole_mem[0].optimizer, params * 12 / 16);
}

// The example: GPT-3 175B with ZeRO-3, tp 1, pp 1 on 384 A100s runs (it was out_of_memory) and
// its gathers are on the network.
TEST(Sharding, Gpt3Zero3OnA100sRunsAndCommunicates) {
  auto topo = podsim::testing::preset("dgx-a100-superpod", {{"nodes", "48"}});
  auto model = load_workload_model(podsim::testing::source_path("workloads/gpt3-175b.yaml"),
                                   {{"parallel.tp", "1"},
                                    {"parallel.pp", "1"},
                                    {"parallel.schedule", "1f1b"},
                                    {"parallel.zero", "3"},
                                    {"parallel.dp_overlap", "false"}},
                                   topo);
  auto r = driver::simulate(topo, *model);
  ASSERT_EQ(r.status, "ok") << r.status_detail;
  // Without prefetch the gathers are exposed: 4 microbatches x 3 passes of 350 GB per rank at most 8
  // rails x 25 GB/s per server take seconds.
  EXPECT_GT(r.mean[Category::dp], 5.0);
  EXPECT_LT(r.mfu(), 1.0);
}

// Backward pieces that run beside a gradient bucket's reduction take longer by at most the device's
// overlap_compute_slowdown; the first piece (nothing in flight yet) and a device without contention not.
TEST(Sharding, OverlappedComputeIsSlowedOnlyWhereCommunicationRuns) {
  auto topo = two_nodes();
  ASSERT_GT(topo.device_profile.overlap_compute_slowdown, 1.0);
  auto w = config(topo,
                  {{"parallel.zero", "0"}, {"parallel.dp_overlap", "true"}, {"parallel.dp_bucket_MB", "10"}});
  auto pieces = [&](const topology::Topology& t) {
    std::vector<double> out;
    auto plan = step(t, w);
    for (const auto& task : plan.graph.tasks)
      if (task.kind == TaskKind::backward && task.microbatch == 1) out.push_back(task.compute_seconds);
    return out;
  };
  auto slowed = pieces(topo);
  ASSERT_GT(slowed.size(), 2u);
  EXPECT_GT(slowed[1], slowed[0]);
  EXPECT_LE(slowed[1], slowed[0] * topo.device_profile.overlap_compute_slowdown * (1 + 1e-12));
  auto calm = topo;
  calm.device_profile.overlap_compute_slowdown = 1.0;
  auto plain = pieces(calm);
  for (size_t i = 0; i < plain.size(); ++i) EXPECT_DOUBLE_EQ(plain[i], slowed[0]);
}

TEST(Sharding, RefusedSettingsNameTheFieldAndWhatIsValid) {
  auto topo = two_nodes();
  auto message = [&](Overrides sets) {
    return podsim::testing::error_of([&] { config(topo, std::move(sets)); });
  };
  std::string bad_group = message({{"parallel.zero", "3"}, {"parallel.shard_group", "3"}});
  EXPECT_NE(bad_group.find("shard_group"), std::string::npos) << bad_group;
  EXPECT_NE(bad_group.find("must divide dp=16"), std::string::npos) << bad_group;
  EXPECT_NE(bad_group.find("valid: 0, 1, 2, 4, 8, 16"), std::string::npos) << bad_group;
  std::string nothing_sharded = message({{"parallel.shard_group", "8"}});
  EXPECT_NE(nothing_sharded.find("zero is 0"), std::string::npos) << nothing_sharded;
}

// ZeRO 1 with dp_overlap: the parameter all-gather runs under the step's first forward (each forward
// piece of microbatch 0 waits for its bucket), none after the optimizer; without overlap it follows the
// optimizer.
TEST(Sharding, Zero1ParameterGatherOverlapsTheFirstForward) {
  auto topo = two_nodes();
  auto gathers_before_forward = [&](const char* overlap) {
    auto plan = step(topo, config(topo, {{"parallel.zero", "1"}, {"parallel.dp_overlap", overlap}}));
    const auto& tasks = plan.graph.tasks;
    int waiting = 0, after_optimizer = 0;
    for (const auto& t : tasks) {
      for (int d : t.deps) {
        if (t.kind == TaskKind::forward && t.microbatch == 0 && tasks[d].kind == TaskKind::dp) ++waiting;
        if (t.kind == TaskKind::dp && tasks[d].kind == TaskKind::optimizer) ++after_optimizer;
      }
    }
    return std::make_pair(waiting, after_optimizer);
  };
  auto [waiting, after] = gathers_before_forward("true");
  EXPECT_GT(waiting, 0);
  EXPECT_EQ(after, 0);
  auto [waiting_plain, after_plain] = gathers_before_forward("false");
  EXPECT_EQ(waiting_plain, 0);
  EXPECT_EQ(after_plain, 1);
}

TEST(Sharding, ProfileRefusesASlowdownBelowOne) {
  std::ifstream in(podsim::testing::source_path("calibration/profiles/a100-sxm4-80gb.yaml"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto at = text.find("overlap_compute_slowdown: 1.1");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 29, "overlap_compute_slowdown: 0.9");
  std::string path = ::testing::TempDir() + "/podsim_bad_slowdown.yaml";
  { std::ofstream(path) << text; }
  try {
    calibration::load_device_profile(path);
    FAIL() << "accepted a slowdown of 0.9";
  } catch (const InputError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("overlap_compute_slowdown"), std::string::npos) << msg;
    EXPECT_NE(msg.find("between 1"), std::string::npos) << msg;
  }
}
