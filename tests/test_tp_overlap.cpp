// parallel.tp_overlap with Transformer Engine's userbuffers (tp_overlap.hpp): TE's per-GEMM defaults, the
// chunked GEMMs on the SMs the communication leaves, the six backward collectives, the exposed shares per
// method, the plan bound staying below the simulation, and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "podsim/calibration/compute_model.hpp"
#include "podsim/core/error.hpp"
#include "podsim/driver/simulation.hpp"
#include "podsim/workload/transformer/layer_ops.hpp"
#include "podsim/workload/transformer/tp_overlap.hpp"
#include "podsim/workload/transformer/transformer_loader.hpp"
#include "podsim/workload/workload_model.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::workload;
using podsim::testing::error_of;

namespace {

const std::string kWorkload = "workloads/llama3-70b.yaml";

Overrides small(Overrides extra = {}) {
  Overrides o = {{"model.layers", "2"},
                 {"parallel.tp", "8"},
                 {"parallel.pp", "1"},
                 {"parallel.dp", "1"},
                 {"parallel.cp", "1"},
                 {"parallel.zero", "0"},
                 {"parallel.schedule", "1f1b"},
                 {"parallel.sequence_parallel", "true"},
                 {"parallel.tp_overlap", "true"},
                 {"training.global_batch", "2"},
                 {"training.micro_batch", "1"},
                 {"training.precision", "fp8"},
                 {"training.recompute", "none"},
                 {"model.seq_len", "4096"},
                 {"parallel.virtual_stages", "1"}};
  o.insert(o.end(), extra.begin(), extra.end());
  return o;
}

topology::Topology h100() {
  return podsim::testing::preset("dgx-h100-superpod", {{"nodes", "1"}});
}

WorkloadConfig config(Overrides extra = {}) {
  return load_workload(podsim::testing::source_path(kWorkload), small(extra), h100());
}

calibration::ComputeModel compute_model(const topology::Topology& topo) {
  return calibration::ComputeModel(topo.device_profile, device_rates(topo.device, topology::Precision::fp8));
}

const OpCost* op(const PassCost& p, const std::string& name) {
  for (const auto& o : p.ops)
    if (name == o.name) return &o;
  return nullptr;
}

}  // namespace

TEST(Userbuffers, DefaultsAreTransformerEngines) {
  TpOverlapGemms d = te_default_tp_overlap();
  for (UbGemm g : {UbGemm::qkv_fprop, UbGemm::fc1_fprop, UbGemm::proj_dgrad, UbGemm::fc2_dgrad}) {
    EXPECT_EQ(d[g].method, UbMethod::ring_exchange) << to_string(g);
    EXPECT_FALSE(d[g].set_sm_margin);
  }
  for (UbGemm g : {UbGemm::proj_fprop, UbGemm::fc2_fprop}) {
    EXPECT_EQ(d[g].method, UbMethod::pipeline);
    EXPECT_EQ(d[g].num_sm, 16);
    EXPECT_EQ(d[g].num_splits, 4);
    EXPECT_TRUE(d[g].set_sm_margin);
  }
  for (UbGemm g : {UbGemm::qkv_dgrad, UbGemm::qkv_wgrad, UbGemm::fc1_dgrad, UbGemm::fc1_wgrad}) {
    EXPECT_EQ(d[g].method, UbMethod::bulk);
    EXPECT_EQ(d[g].num_sm, 16);
  }
  // A workload's own setting replaces one field; a method change starts from that method's defaults.
  WorkloadConfig w = config({{"parallel.tp_overlap_gemms.qkv_wgrad.num_sm", "24"},
                             {"parallel.tp_overlap_gemms.fc2_fprop.method", "ring_exchange"}});
  EXPECT_EQ(w.parallel.tp_overlap_gemms[UbGemm::qkv_wgrad].num_sm, 24);
  EXPECT_EQ(w.parallel.tp_overlap_gemms[UbGemm::fc2_fprop].method, UbMethod::ring_exchange);
  EXPECT_EQ(w.parallel.tp_overlap_gemms[UbGemm::fc2_fprop].num_sm, 1);
  EXPECT_EQ(w.parallel.tp_overlap_gemms[UbGemm::proj_fprop].num_sm, 16);
}

TEST(Userbuffers, RingExchangeRunsTpChunksAndPipelineRunsOnTheSmsLeft) {
  auto topo = h100();
  auto cm = compute_model(topo);
  WorkloadConfig w = config();
  LayerCosts c = layer_costs(w, 1, cm);
  // Llama 3 70B, s 4096, tp 8: fc1 is [4096 x 7168] x 8192 in 8 ring-exchange chunks of 512 rows.
  const OpCost* fc1 = op(c.forward, "MLP fc1");
  ASSERT_NE(fc1, nullptr);
  double chunk = gemm_cost(cm, "x", 512, 2 * 28672 / 8, 8192).seconds;
  EXPECT_NEAR(fc1->seconds, 8 * chunk, 1e-12);
  EXPECT_NEAR(fc1->flops, 2.0 * 4096 * 2 * 28672 / 8 * 8192, 1);
  // Aggregated: 4 chunks of 1024 rows, never slower than 8 of 512.
  LayerCosts agg = layer_costs(config({{"parallel.tp_overlap_gemms.fc1_fprop.aggregate", "true"}}), 1, cm);
  double agg_s = op(agg.forward, "MLP fc1")->seconds;
  EXPECT_NEAR(agg_s, 4 * gemm_cost(cm, "x", 1024, 2 * 28672 / 8, 8192).seconds, 1e-12);
  EXPECT_LE(agg_s, fc1->seconds);
  // fc2 (pipeline, 16 SMs held, 4 splits): 4 GEMMs of 1024 rows on 116 of 132 SMs.
  const OpCost* fc2 = op(c.forward, "MLP fc2");
  auto narrowed = cm.without_sms(16);
  EXPECT_EQ(narrowed.sm_count(), topo.device.sm_count - 16);
  EXPECT_NEAR(fc2->seconds, 4 * gemm_cost(narrowed, "x", 1024, 8192, 28672 / 8).seconds, 1e-12);
  // Fewer SMs are never faster; without the overlap the GEMM is one kernel on every SM.
  EXPECT_GT(gemm_cost(narrowed, "x", 4096, 8192, 3584).seconds, gemm_cost(cm, "x", 4096, 8192, 3584).seconds);
  LayerCosts plain = layer_costs(config({{"parallel.tp_overlap", "false"}}), 1, cm);
  EXPECT_NEAR(op(plain.forward, "MLP fc1")->seconds, gemm_cost(cm, "x", 4096, 7168, 8192).seconds, 1e-12);
}

TEST(Userbuffers, BackwardGathersTheSavedInputsAndEachMethodExposesItsShare) {
  auto cm = compute_model(h100());
  LayerCosts c = layer_costs(config(), 1, cm);
  double bytes = 4096.0 * 8192 * 2;  // tokens x hidden in bf16
  ASSERT_EQ(c.forward.tp.size(), 4u);
  ASSERT_EQ(c.backward.tp.size(), 6u);  // + the all-gathers of qkv's and fc1's saved inputs for wgrad
  int gathers = 0, mlp = 0;
  for (const auto& t : c.forward.tp)  // fp8: TE quantizes before it gathers; reduce-scatters stay bf16
    EXPECT_DOUBLE_EQ(t.bytes, t.kind == network::CollectiveKind::all_gather ? bytes / 2 : bytes);
  for (const auto& t : c.backward.tp) {
    EXPECT_DOUBLE_EQ(t.bytes, t.kind == network::CollectiveKind::all_gather ? bytes / 2 : bytes);
    EXPECT_TRUE(t.sm_costed);
    EXPECT_GT(t.overlap_seconds, 0);
    gathers += t.kind == network::CollectiveKind::all_gather;
    mlp += t.mlp;
  }
  EXPECT_EQ(gathers, 4);
  EXPECT_EQ(mlp, 3);
  // Forward: qkv ring exchange (nothing exposed, 7/8 window), proj pipeline (last of 4 exposed).
  EXPECT_DOUBLE_EQ(c.forward.tp[0].exposed_share, 0);
  EXPECT_DOUBLE_EQ(c.forward.tp[0].window_share, 7.0 / 8);
  EXPECT_DOUBLE_EQ(c.forward.tp[1].exposed_share, 0.25);
  EXPECT_DOUBLE_EQ(c.forward.tp[1].window_share, 0.75);
  // Backward bulk: the whole transfer beside the whole GEMM.
  EXPECT_DOUBLE_EQ(c.backward.tp[0].exposed_share, 0);
  EXPECT_DOUBLE_EQ(c.backward.tp[0].window_share, 1);
}

// Without userbuffers Transformer Engine still overlaps part of sequence parallelism's backward: it
// re-gathers the QKV and fc1 inputs beside their dgrad GEMMs and reduce-scatters their dgrads beside their
// wgrad GEMMs (asynchronous NCCL calls); proj's and fc2's output gradients are gathered before their GEMMs.
TEST(Userbuffers, WithoutThemTheBackwardStillGathersAndScattersBesideTheGemms) {
  auto cm = compute_model(h100());
  LayerCosts c = layer_costs(config({{"parallel.tp_overlap", "false"}}), 1, cm);
  ASSERT_EQ(c.forward.tp.size(), 4u);
  for (const auto& t : c.forward.tp) EXPECT_FALSE(t.async);  // the forward's block
  ASSERT_EQ(c.backward.tp.size(), 6u);
  int gathers = 0, beside = 0, mlp = 0;
  for (const auto& t : c.backward.tp) {
    gathers += t.kind == network::CollectiveKind::all_gather;
    mlp += t.mlp;
    if (!t.async) {
      EXPECT_EQ(t.kind, network::CollectiveKind::all_gather);  // an output gradient
      continue;
    }
    ++beside;
    EXPECT_GT(t.overlap_seconds, 0);
    EXPECT_DOUBLE_EQ(t.exposed_share, 0);
    EXPECT_DOUBLE_EQ(t.window_share, 1);
    EXPECT_FALSE(t.sm_costed);  // NCCL's kernels slow the GEMM by the profile's overlap_compute_slowdown
  }
  EXPECT_EQ(gathers, 4);
  EXPECT_EQ(beside, 4);
  EXPECT_EQ(mlp, 3);
  auto topo = h100();
  auto model = load_workload_model(podsim::testing::source_path(kWorkload),
                                   small({{"parallel.tp_overlap", "false"}}), topo);
  auto r = driver::simulate(topo, *model);
  EXPECT_LT(r.mfu(), 1);
  for (const auto& st : r.stages) EXPECT_NEAR(st.total(), r.step_time(), 1e-9 * r.step_time());
}

TEST(Userbuffers, SimulatesPhysicallyAndOnlyWhereTheDeviceHasUserbuffers) {
  auto topo = h100();
  auto model = load_workload_model(podsim::testing::source_path(kWorkload), small(), topo);
  auto r = driver::simulate(topo, *model);
  EXPECT_GT(r.step_time(), 0);
  EXPECT_LT(r.mfu(), 1);
  for (const auto& s : r.stages) EXPECT_NEAR(s.total(), r.step_time(), 1e-9 * r.step_time());
  // An A100 has no userbuffers: tp_overlap is ignored and the step is the serial one.
  auto a100 = podsim::testing::preset("dgx-a100-superpod", {{"nodes", "1"}});
  auto run = [&](const std::string& overlap) {
    auto m =
        load_workload_model(podsim::testing::source_path(kWorkload),
                            small({{"training.precision", "bf16"}, {"parallel.tp_overlap", overlap}}), a100);
    return driver::simulate(a100, *m).step_time();
  };
  EXPECT_DOUBLE_EQ(run("true"), run("false"));
}

TEST(Userbuffers, BadInputIsAClearError) {
  EXPECT_NE(error_of([] {
              config({{"parallel.tp_overlap_gemms.qkv_wgrad.method", "ring_exchange"}});
            }).find("is not one of: bulk"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              config({{"parallel.tp_overlap_gemms.qkv_fprop.num_splits", "2"}});
            }).find("only a pipeline overlap has num_splits"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              config({{"parallel.tp_overlap_gemms.attn_fprop.num_sm", "2"}});
            }).find("unknown GEMM 'attn_fprop'"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              config({{"parallel.tp_overlap", "false"}, {"parallel.tp_overlap_gemms.qkv_wgrad.num_sm", "2"}});
            }).find("set parallel.tp_overlap: true"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              config({{"parallel.tp_overlap_gemms.proj_fprop.aggregate", "true"}});
            }).find("ring_exchange only"),
            std::string::npos);
}

TEST(Userbuffers, RunOnlyWithTensorAndSequenceParallelismOnAHopperOrNewerDevice) {
  auto h = h100().device;
  auto a100 = podsim::testing::preset("dgx-a100-superpod", {{"nodes", "1"}}).device;
  ParallelConfig p;
  p.tp = 4;
  p.sequence_parallel = true;
  p.tp_overlap = true;
  EXPECT_TRUE(tp_overlap_in_effect(p, h));
  EXPECT_FALSE(tp_overlap_in_effect(p, a100));  // no fp8 tensor cores: no userbuffers
  ParallelConfig off = p;
  off.tp_overlap = false;
  EXPECT_FALSE(tp_overlap_in_effect(off, h));
  ParallelConfig tp1 = p;
  tp1.tp = 1;  // nothing to overlap
  EXPECT_FALSE(tp_overlap_in_effect(tp1, h));
  ParallelConfig no_sp = p;
  no_sp.sequence_parallel = false;  // userbuffers overlap the sequence-parallel collectives only
  EXPECT_FALSE(tp_overlap_in_effect(no_sp, h));
}

TEST(Userbuffers, TheGemmNamesInAnErrorAreTransformerEnginesTen) {
  std::string e = error_of([] { config({{"parallel.tp_overlap_gemms.qkv.method", "bulk"}}); });
  for (const char* name : {"qkv_fprop", "proj_fprop", "fc1_fprop", "fc2_fprop", "qkv_dgrad", "qkv_wgrad",
                           "fc1_dgrad", "fc1_wgrad", "proj_dgrad", "fc2_dgrad"})
    EXPECT_NE(e.find(name), std::string::npos) << name;
  EXPECT_NE(error_of([] {
              config({{"parallel.tp_overlap_gemms.fc2_fprop.method", "bulk"}});
            }).find("is not one of: ring_exchange, pipeline"),
            std::string::npos);
}
