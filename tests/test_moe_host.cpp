// The host-bound floor of a MoE block (moe.host_forward_us / moe.host_backward_us): a block's pass lasts at
// least its host launch time, less what its own kernels and its dispatch / combine hide.
#include <gtest/gtest.h>

#include "podsim/core/config_node.hpp"
#include "podsim/driver/simulation.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"
#include "podsim/workload/workload_model.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::workload;
using podsim::testing::error_of;
using podsim::testing::source_path;

namespace {

// Qwen3-30B-A3B cut to 4 layers, one sequence per device: one forward and one backward of 4 MoE layers.
double qwen_step(int nodes, Overrides sets) {
  Overrides base = {{"model.layers", "4"},
                    {"training.global_batch", std::to_string(8 * nodes)},
                    {"parallel.dp", std::to_string(8 * nodes)}};
  base.insert(base.end(), sets.begin(), sets.end());
  auto topo = podsim::testing::preset("dgx-h100-superpod", {{"nodes", std::to_string(nodes)}});
  auto model = load_workload_model(source_path("workloads/qwen3-30b-a3b.yaml"), base, topo);
  auto r = driver::simulate(topo, *model);
  EXPECT_EQ(r.status, "ok");
  return r.step_time();
}

}  // namespace

// A host time below the block's device time hides entirely: nothing changes.
TEST(MoeHost, HostTimeBelowDeviceTimeChangesNothing) {
  double base = qwen_step(1, {{"parallel.ep", "8"}});
  double tiny =
      qwen_step(1, {{"parallel.ep", "8"}, {"moe.host_forward_us", "1"}, {"moe.host_backward_us", "1"}});
  EXPECT_DOUBLE_EQ(tiny, base);
}

// Host-bound blocks: each of the 4 MoE layers' passes waits host - device, so two host times 10 ms apart
// differ by 4 x 10 ms per pass kind (the block's device time cancels), forward and backward alike.
TEST(MoeHost, HostBoundBlocksAddTheirDeficitPerLayer) {
  Overrides ep1 = {{"parallel.ep", "1"}};
  auto with = [&](const char* key, const char* us) {
    Overrides s = ep1;
    s.push_back({key, us});
    return qwen_step(1, s);
  };
  for (const char* key : {"moe.host_forward_us", "moe.host_backward_us"}) {
    double a = with(key, "20000"), b = with(key, "30000");
    EXPECT_NEAR(b - a, 4 * 0.010, 1e-6) << key;
    EXPECT_GT(a, qwen_step(1, ep1)) << key;
  }
}

// The dispatch / combine hides host time: across two nodes (InfiniBand, slower) it hides more of the same
// host time than inside one NVLink node.
TEST(MoeHost, SlowerDispatchHidesMoreHostTime) {
  auto stall = [&](const char* ep) {
    Overrides s = {{"parallel.ep", ep}};
    double base = qwen_step(2, s);
    s.push_back({"moe.host_forward_us", "3000"});
    return qwen_step(2, s) - base;
  };
  double inside = stall("8"), across = stall("16");
  EXPECT_GT(inside, 0);
  EXPECT_LT(across, inside);
}

TEST(MoeHost, NegativeHostTimeIsAClearError) {
  auto topo = podsim::testing::preset("dgx-h100-superpod", {{"nodes", "1"}});
  std::string e = error_of([&] {
    load_workload_model(source_path("workloads/qwen3-30b-a3b.yaml"),
                        {{"model.layers", "4"},
                         {"parallel.dp", "8"},
                         {"parallel.ep", "8"},
                         {"training.global_batch", "8"},
                         {"moe.host_forward_us", "-5"}},
                        topo);
  });
  EXPECT_NE(e.find("host_forward_us"), std::string::npos) << e;
  EXPECT_NE(e.find("CPU time"), std::string::npos) << e;
}
