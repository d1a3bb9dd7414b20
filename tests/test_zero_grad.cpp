// The per-step memset of the gradient buffer (Megatron-Core zero_grad_buffer), charged with the optimizer
// step: it scales with the bytes of the buffer and shards with the gradients from ZeRO 2 on.
#include <gtest/gtest.h>

#include "podsim/workload/transformer/megatron_builder.hpp"
#include "podsim/workload/transformer/memory_model.hpp"
#include "podsim/workload/transformer/transformer_loader.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::workload;

namespace {

Overrides small(Overrides extra) {
  Overrides o = {{"model.layers", "4"},
                 {"model.hidden", "2048"},
                 {"model.heads", "16"},
                 {"model.ffn_hidden", "8192"},
                 {"model.seq_len", "2048"},
                 {"model.vocab", "51200"},
                 {"parallel.tp", "2"},
                 {"parallel.pp", "1"},
                 {"parallel.dp", "4"},
                 {"parallel.schedule", "1f1b"},
                 {"parallel.virtual_stages", "1"},
                 {"parallel.zero", "1"},
                 {"training.global_batch", "8"},
                 {"training.micro_batch", "1"},
                 {"training.precision", "bf16"},
                 {"training.recompute", "none"}};
  o.insert(o.end(), extra.begin(), extra.end());
  return o;
}

topology::Topology h100() {
  return podsim::testing::preset("dgx-h100-superpod", {{"nodes", "1"}});
}

// Device time of stage 0's optimizer step.
double optimizer_seconds(Overrides extra) {
  auto topo = h100();
  auto w = load_workload(podsim::testing::source_path("workloads/gpt3-175b.yaml"), small(extra), topo);
  auto plan = build_megatron_step(topo, w, 1, 1);
  double sum = 0;
  for (const auto& t : plan.graph.tasks)
    if (t.kind == plan::TaskKind::optimizer && t.stage == 0) sum += t.compute_seconds;
  return sum;
}

}  // namespace

TEST(ZeroGrad, MemsetScalesWithTheGradientBuffer) {
  // fp32 main grads (4 bytes) against the fused bf16 buffer (2 bytes): the optimizer's own work is the
  // same, the memset moves twice the bytes; the kernel launch cancels in the difference.
  Overrides fp32 = {{"training.grad_accumulation", "fp32"}};
  Overrides bf16 = {{"training.grad_accumulation", "fused"}, {"training.grad_reduce_precision", "bf16"}};
  double extra_z1 = optimizer_seconds(fp32) - optimizer_seconds(bf16);
  EXPECT_GT(extra_z1, 0);
  auto topo = h100();
  auto w = load_workload(podsim::testing::source_path("workloads/gpt3-175b.yaml"), small(fp32), topo);
  double bytes = stage_params(w, 0) * 2;  // 4 - 2 bytes a gradient
  double bandwidth = bytes / extra_z1;
  // The memset runs at the achieved HBM bandwidth: below the datasheet, above half of it.
  EXPECT_LT(bandwidth, topo.device.hbm_bandwidth);
  EXPECT_GT(bandwidth, 0.5 * topo.device.hbm_bandwidth);
  // ZeRO 2 shards the gradient buffer over dp = 4 (the optimizer work is sharded at ZeRO 1 already).
  fp32.push_back({"parallel.zero", "2"});
  bf16.push_back({"parallel.zero", "2"});
  double extra_z2 = optimizer_seconds(fp32) - optimizer_seconds(bf16);
  EXPECT_NEAR(extra_z2, extra_z1 / 4, 1e-9 * extra_z1);
}
