// The GShard MoE workload: parameters against the paper's model sizes, MoE FLOPs and all-to-all bytes
// against their closed forms, the step graph, memory, bad input.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "podsim/core/config_node.hpp"
#include "podsim/core/error.hpp"
#include "podsim/driver/simulation.hpp"
#include "podsim/workload/moe/gshard_builder.hpp"
#include "podsim/workload/moe/gshard_math.hpp"
#include "podsim/workload/workload_model.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using podsim::testing::preset;
using podsim::testing::source_path;

namespace {

workload::GShardConfig config(const topology::Topology& topo, const workload::Overrides& sets = {}) {
  ConfigNode root = ConfigNode::load_file(source_path("workloads/gshard-moe.yaml"));
  for (const auto& [k, v] : sets) root.apply_override(k, v, "--set workload." + k + "=" + v);
  root.choice("kind", {"gshard_moe"});
  return workload::read_gshard_workload(root, topo.device_count());
}

std::string config_error(const topology::Topology& topo, const workload::Overrides& sets) {
  return podsim::testing::error_of([&] { config(topo, sets); });
}

}  // namespace

TEST(GShard, ParametersMatchThePublishedModelSizes) {
  // Lepikhin et al. 2020, Table 3 (validation/gshard-moe.csv): MoE(128E,36L) 37B, (512E,36L) 150B,
  // (2048E,36L) 600B, (2048E,60L) 1T parameters. The paper rounds; podsim counts every weight matrix, and
  // the dense weights (0.63B) are a larger share of the small models.
  auto topo = preset("tpu-v3-pod");
  struct Row {
    const char *experts, *layers;
    double billions;
  };
  for (Row r : {Row{"128", "36", 37}, Row{"512", "36", 150}, Row{"2048", "36", 600}, Row{"2048", "60", 1000},
                Row{"2048", "12", 200}}) {
    auto w = config(topo, {{"model.experts", r.experts}, {"model.layers", r.layers}});
    EXPECT_NEAR(workload::gshard_params(w).total() / 1e9 / r.billions, 1.0, 0.07)
        << r.experts << "E " << r.layers;
  }
}

TEST(GShard, MoeFlopsAndAllToAllBytesFollowTheirClosedForms) {
  auto topo = preset("tpu-v3-pod", {{"dims", "[8,8]"}});  // 128 cores
  auto w = config(topo, {{"model.experts", "256"}, {"training.batch_tokens", "1048576"}});
  const double M = 1024, H = 8192, E = 256, T = 1048576.0 / 128, k = 2, cf = 1.0;
  ASSERT_EQ(w.experts_per_device(), 2);
  const double C = cf * k * T / E;  // per group of T tokens
  EXPECT_DOUBLE_EQ(w.expert_capacity(), C);
  // All-to-all: a device sends its [E, C, M] dispatched tensor in float32 (the preset's activations) =
  // cf * k * T * M * 4 bytes.
  EXPECT_DOUBLE_EQ(workload::gshard_all_to_all_bytes(w), cf * k * T * M * 4);
  auto cm = calibration::ComputeModel(topo.device_profile, {61.5e12, 450e9, 2, 2});
  auto c = workload::gshard_layer_costs(w, cm);
  // Experts: 2 experts per device, each C tokens from each of 128 groups, two GEMMs of 2*M*H per token.
  EXPECT_DOUBLE_EQ(c.experts_forward.flops, 2 * 2 * M * H * (2 * 128 * C));
  EXPECT_DOUBLE_EQ(c.experts_backward.flops, 2 * c.experts_forward.flops);
  // Gating logits 2*T*M*E, dispatch and combine one-hot einsums 2*S*E*C*M each.
  EXPECT_DOUBLE_EQ(c.gate_dispatch_forward.flops, 2 * T * M * E + 2 * T * E * C * M);
  EXPECT_DOUBLE_EQ(c.combine_forward.flops, 2 * T * E * C * M);
  // Model FLOPs count top-k experts per token: per-device compute does not depend on the device count.
  auto w512 = config(preset("tpu-v3-pod", {{"dims", "[16,16]"}}),
                     {{"model.experts", "256"}, {"training.batch_tokens", "1048576"}});
  EXPECT_DOUBLE_EQ(workload::gshard_model_flops(w), workload::gshard_model_flops(w512));
  // Memory: the MoE weights of one device are its experts of every MoE layer.
  auto mem = workload::gshard_memory(w, topo.device_profile);
  double expert_weights = 18 * 2 * 2 * M * H * 4;
  EXPECT_NEAR(mem.weights, (workload::gshard_params(w).dense * 4 + expert_weights), 1);
}

TEST(GShard, StepHasTheAllToAllsOfEveryMoeLayer) {
  auto topo = preset("tpu-v3-pod", {{"dims", "[16,16]"}});
  auto w = config(topo, {{"model.experts", "512"}, {"training.batch_tokens", "1048576"}});
  auto plan = workload::build_gshard_step(topo, w);
  int a2a = 0, dp = 0;
  for (const auto& t : plan.graph.tasks) {
    a2a += t.plan >= 0 && t.comm_category == workload::Category::ep;
    dp += t.plan >= 0 && t.comm_category == workload::Category::dp;
  }
  EXPECT_EQ(a2a, 18 * 6);  // dispatch + combine forward, again when rematerialized, and backward
  EXPECT_EQ(dp, 1);        // one expert per device: only the dense weights are all-reduced
  EXPECT_LT(plan.graph.tasks.size(), 200u);
  // The MoE weights one device holds: its expert of each of the 18 MoE layers, fp32.
  ASSERT_EQ(plan.metrics.front().first, "moe_weights_GiB");
  EXPECT_NEAR(plan.metrics.front().second, 18 * 2 * 1024.0 * 8192 * 4 / 1073741824.0, 1e-12);
  w.rematerialization = false;
  w.devices = 512;
  auto no_remat = workload::describe_gshard_step(topo, w);
  EXPECT_GT(no_remat.memory[0].activations, plan.memory[0].activations);
  // Fewer experts than devices: each expert's replicas all-reduce its gradients.
  auto shared = config(topo, {{"model.experts", "128"}, {"training.batch_tokens", "1048576"}});
  EXPECT_EQ(shared.devices_per_expert(), 4);
  auto plan2 = workload::build_gshard_step(topo, shared);
  dp = 0;
  for (const auto& t : plan2.graph.tasks) dp += t.plan >= 0 && t.comm_category == workload::Category::dp;
  EXPECT_EQ(dp, 2);
}

TEST(GShard, RunsOnTpuAndGpuAndReportsTheAllToAllShare) {
  for (const auto& [topo_file, sets] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"topologies/tpu-v3-pod.yaml",
            {"topology.dims=[8,8]", "workload.model.experts=128", "workload.training.batch_tokens=524288"}},
           {"topologies/dgx-a100-superpod.yaml",
            {"topology.nodes=4", "workload.model.experts=32", "workload.training.batch_tokens=131072"}}}) {
    driver::RunRequest req{source_path(topo_file), source_path("workloads/gshard-moe.yaml"), sets};
    auto r = driver::simulate(req);
    ASSERT_TRUE(r.ok()) << topo_file << ": " << r.status_detail;
    EXPECT_GT(r.mean[workload::Category::ep], 0) << topo_file;
    EXPECT_GT(r.mean[workload::Category::compute], r.mean[workload::Category::ep]) << topo_file;
    EXPECT_GT(r.mean[workload::Category::dp], 0) << topo_file;
    EXPECT_NEAR(r.mean.total(), r.step_time(), 1e-9 * r.step_time());
  }
}

TEST(GShard, BadInputNamesTheField) {
  auto topo = preset("tpu-v3-pod", {{"dims", "[4,8]"}});  // 64 cores
  std::string e = config_error(topo, {{"model.experts", "100"}});
  EXPECT_NE(e.find("model.experts"), std::string::npos) << e;
  EXPECT_NE(e.find("cannot be sharded over 64 devices"), std::string::npos) << e;
  e = config_error(topo, {{"model.capacity_factor", "0"}});
  EXPECT_NE(e.find("model.capacity_factor"), std::string::npos) << e;
  e = config_error(topo, {{"model.capacity_factor", "-1.5"}});
  EXPECT_NE(e.find("more than 0"), std::string::npos) << e;
  e = config_error(topo, {{"model.layers", "35"}});
  EXPECT_NE(e.find("even"), std::string::npos) << e;
  e = config_error(topo, {{"model.top_k", "3000"}});
  EXPECT_NE(e.find("top_k"), std::string::npos) << e;
  e = config_error(topo, {{"training.batch_tokens", "1000"}});
  EXPECT_NE(e.find("batch_tokens"), std::string::npos) << e;
  e = config_error(topo, {{"parallel.devices", "128"}});
  EXPECT_NE(e.find("topology has 64"), std::string::npos) << e;
  EXPECT_TRUE(config_error(topo, {{"model.experts", "32"}}).empty());   // each expert on 2 devices
  EXPECT_TRUE(config_error(topo, {{"model.experts", "128"}}).empty());  // 2 experts per device
}

// Issue 11: at capacity factor 0.001 model FLOPs still counted every token's top-2 experts while the
// devices ran one token per expert per group: MFU 183.8% with HFU 34.9%.
TEST(GShard, DroppedTokensAreNoModelFlops) {
  auto topo = preset("tpu-v3-pod", {{"dims", "[8,8]"}});  // 128 cores
  const double M = 1024, H = 8192, E = 128, k = 2;
  auto full = config(topo, {{"model.experts", "128"}, {"training.batch_tokens", "1048576"}});
  auto tiny = config(
      topo,
      {{"model.experts", "128"}, {"training.batch_tokens", "1048576"}, {"model.capacity_factor", "0.001"}});
  ASSERT_EQ(tiny.expert_capacity(), 1);
  // Per MoE layer, forward + backward: 3 x 2 x 2MH per processed token copy; tokens over capacity skip it.
  double tokens = 1048576, groups = 128;
  double processed_full = k * tokens, processed_tiny = groups * E * 1;
  double moe_layers = 18;
  EXPECT_NEAR(workload::gshard_model_flops(full) - workload::gshard_model_flops(tiny),
              moe_layers * 3 * 2 * 2 * M * H * (processed_full - processed_tiny),
              1e-9 * workload::gshard_model_flops(full));
  // Hardware FLOPs include what model FLOPs count, whatever the capacity.
  auto cm = calibration::ComputeModel(topo.device_profile, {61.5e12, 450e9, 2, 2});
  for (const char* cf : {"0.001", "0.1", "0.5", "1", "2", "1000"}) {
    auto w = config(
        topo,
        {{"model.experts", "128"}, {"training.batch_tokens", "1048576"}, {"model.capacity_factor", cf}});
    EXPECT_LE(workload::gshard_model_flops(w),
              workload::gshard_hardware_flops(workload::gshard_layer_costs(w, cm), w))
        << "capacity_factor " << cf;
    EXPECT_LE(w.expert_capacity(), static_cast<double>(w.group_tokens())) << cf;
  }
  // End to end through the simulator: MFU <= HFU < 100%.
  driver::RunRequest req{source_path("topologies/tpu-v3-pod.yaml"),
                         source_path("workloads/gshard-moe.yaml"),
                         {"topology.dims=[8,8]", "workload.model.experts=128",
                          "workload.training.batch_tokens=524288", "workload.model.capacity_factor=0.001"}};
  auto r = driver::simulate(req);
  ASSERT_TRUE(r.ok()) << r.status_detail;
  EXPECT_LE(r.mfu(), r.hfu());
  EXPECT_LT(r.hfu(), 1.0);
}

TEST(GShard, AbsurdCapacityFactorsAreRefused) {
  auto topo = preset("tpu-v3-pod", {{"dims", "[4,8]"}});
  for (const char* cf : {"1e300", "1001"}) {
    std::string e = config_error(topo, {{"model.capacity_factor", cf}});
    EXPECT_NE(e.find("model.capacity_factor"), std::string::npos) << cf << ": " << e;
    // 1e300 is refused by every numeric reader (beyond 1e15), 1001 by the capacity factor's own range.
    EXPECT_NE(e.find(std::string(cf) == "1e300" ? "out of range" : "at most 1000"), std::string::npos)
        << cf << ": " << e;
  }
  EXPECT_EQ(config_error(topo, {{"model.capacity_factor", "1000"}}), "");
  EXPECT_NE(config_error(topo, {{"model.top_k", "4294967298"}}).find("model.top_k"), std::string::npos);
}

// Issue 11: on a Cerebras cluster, MemoryX and SwarmX endpoints are device ranks that compute nothing;
// GShard counted them ("22 of 16 x WSE-2").
TEST(GShard, UsesOnlyComputeDevices) {
  auto topo = preset("cerebras-cs2-cluster");
  ASSERT_GT(topo.device_count(), topo.compute_device_count());
  auto model = workload::load_workload_model(source_path("workloads/gshard-moe.yaml"),
                                             {{"model.experts", "32"}}, topo);
  EXPECT_EQ(model->devices(), topo.compute_device_count());
  EXPECT_THROW(
      workload::load_workload_model(source_path("workloads/gshard-moe.yaml"),
                                    {{"parallel.devices", std::to_string(topo.device_count())}}, topo),
      InputError);
}

namespace {

double op_bytes(const workload::PassCost& p, const std::string& prefix) {
  double bytes = 0;
  for (const auto& op : p.ops)
    if (std::string(op.name).rfind(prefix, 0) == 0) bytes += op.bytes;
  return bytes;
}

}  // namespace

TEST(GShard, GatingAndAdafactorPassesFollowTheirClosedForms) {
  // Lingvo's Top2GatingOnLogits (gshard_math.cpp): 4 + 5 + 2 x 7 passes over the fp32 [S, E] gates, 7 over
  // the [S, E, C] combine / dispatch tensors forward; 8 and 2 backward.
  auto topo = preset("tpu-v3-pod", {{"dims", "[8,8]"}});
  auto w = config(topo, {{"model.experts", "128"}, {"training.batch_tokens", "262144"}});
  const double T = 2048, E = 128, C = 2 * T / E, eb = 4;
  auto cm = calibration::ComputeModel(topo.device_profile, {61.5e12, 450e9, 2, 2});
  auto c = workload::gshard_layer_costs(w, cm);
  EXPECT_DOUBLE_EQ(op_bytes(c.gate_dispatch_forward, "gate softmax"), 4 * T * E * 4);
  EXPECT_DOUBLE_EQ(op_bytes(c.gate_dispatch_forward, "top-2 choice"), (5 + 14) * T * E * 4);
  EXPECT_DOUBLE_EQ(op_bytes(c.gate_dispatch_forward, "combine and dispatch"), 7 * T * E * C * eb);
  EXPECT_DOUBLE_EQ(op_bytes(c.gate_dispatch_backward, "gate softmax backward"), 8 * T * E * 4);
  EXPECT_DOUBLE_EQ(op_bytes(c.gate_dispatch_backward, "combine weights"), 2 * T * E * C * eb);
  // Adafactor (Shazeer & Stern 2018, Alg. 4 with clipping and relative step): 9 fp32 accesses per weight.
  EXPECT_DOUBLE_EQ(workload::gshard_adafactor_bytes(w), workload::gshard_device_params(w) * 9 * 4);
}

TEST(GShard, ActivationPrecisionMovesBytesNotMatmuls) {
  auto topo = preset("tpu-v3-pod", {{"dims", "[8,8]"}});
  workload::Overrides small = {{"model.experts", "128"}, {"training.batch_tokens", "262144"}};
  auto fp32 = config(topo, small);
  small.push_back({"training.activation_precision", "bf16"});
  auto bf16 = config(topo, small);
  EXPECT_DOUBLE_EQ(fp32.activation_bytes, 4);
  EXPECT_DOUBLE_EQ(bf16.activation_bytes, 2);
  EXPECT_DOUBLE_EQ(workload::gshard_all_to_all_bytes(fp32), 2 * workload::gshard_all_to_all_bytes(bf16));
  auto cm = calibration::ComputeModel(topo.device_profile, {61.5e12, 450e9, 2, 2});
  auto a = workload::gshard_layer_costs(fp32, cm), b = workload::gshard_layer_costs(bf16, cm);
  EXPECT_DOUBLE_EQ(a.experts_forward.flops, b.experts_forward.flops);
  EXPECT_DOUBLE_EQ(op_bytes(a.dense_ffn_forward, "ReLU"), 2 * op_bytes(b.dense_ffn_forward, "ReLU"));
  EXPECT_GT(workload::gshard_memory(fp32, topo.device_profile).activations,
            workload::gshard_memory(bf16, topo.device_profile).activations);
  std::string e = config_error(topo, {{"training.activation_precision", "fp8"}});
  EXPECT_NE(e.find("training.activation_precision"), std::string::npos) << e;
}

// Table 3 (validation/gshard-moe.csv): MoE(2048E, 36L) on 2048 TPU v3 cores, 0.72 steps/s. podsim
// predicts 0.873 steps/s (21% optimistic; 1.22 before gating passes, Adafactor passes and float32
// activations were modelled). The bound keeps the known miss from growing; it is not a fit.
TEST(GShard, StepRateOfTable3) {
  std::ifstream csv(source_path("validation/gshard-moe.csv"));
  std::string line;
  double published = 0;
  while (std::getline(csv, line))
    if (line.rfind("MoE(2048E 36L),", 0) == 0) {
      std::vector<std::string> cells;
      std::stringstream ss(line);
      for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(cell);
      published = std::stod(cells.at(6));  // steps_per_s
    }
  ASSERT_DOUBLE_EQ(published, 0.72);
  auto topo = preset("tpu-v3-pod");
  auto model = workload::load_workload_model(source_path("workloads/gshard-moe.yaml"), {}, topo);
  auto r = driver::simulate(topo, *model);
  ASSERT_TRUE(r.ok()) << r.status_detail;
  double predicted = 1 / r.step_time();
  EXPECT_GT(predicted, published);  // still optimistic: what is missing is listed in docs/tpu-moe.md
  EXPECT_LT(predicted / published, 1.25) << predicted;
}
