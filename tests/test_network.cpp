// Collective algorithms as flows, and their closed-form time on an idle network.
#include <gtest/gtest.h>

#include "podsim/network/collective.hpp"
#include "podsim/network/link_load.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using network::make_collective;
using podsim::testing::preset;

TEST(Collectives, RingAllReduceInsideAServerMatchesTheBusBandwidthFormula) {
  auto topo = preset("dgx-a100-superpod", {{"nodes", "1"}});
  const double S = 1e9;
  auto plan = network::plan_collective(
      topo, make_collective(network::CollectiveKind::all_reduce, {0, 1, 2, 3, 4, 5, 6, 7}, S));
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].flows.size(), 8u);
  auto cost = network::idle_phase_cost(topo, plan[0]);
  // time = 2(n-1)/n * S / (achieved NVLink bandwidth per GPU); busbw = achieved bandwidth.
  double nvlink = 300e9 * topo.fabric_profile.efficiency("nvlink");
  EXPECT_NEAR(cost.transfer, 2.0 * 7 / 8 * S / nvlink, 1e-12);
  EXPECT_EQ(topo.links[cost.bottleneck_link].cls, topology::LinkClass::nvlink);
  EXPECT_NEAR(plan[0].latency, topo.fabric_profile.launch_latency + 14 * topo.fabric_profile.step("nvlink"),
              1e-12);
}

TEST(Collectives, MultiServerRingUsesOneChannelPerRail) {
  // 4 servers x 8 GPUs: NCCL-style rings, one per rail; the NICs bound it at 8 x 25 GB/s per server.
  auto topo = preset("dgx-a100-superpod", {{"nodes", "4"}});
  std::vector<int> group;
  for (int d = 0; d < 32; ++d) group.push_back(d);
  const double S = 4e9;
  auto plan = network::plan_collective(topo, make_collective(network::CollectiveKind::all_reduce, group, S));
  EXPECT_EQ(plan[0].flows.size(), 8u * 32);
  auto cost = network::idle_phase_cost(topo, plan[0]);
  double nic = 25e9 * topo.fabric_profile.efficiency("infiniband");
  EXPECT_NEAR(cost.transfer, 2.0 * 31 / 32 * S / 8 / nic, 1e-9);
  EXPECT_EQ(topo.links[cost.bottleneck_link].cls, topology::LinkClass::infiniband);
}

TEST(Collectives, HierarchicalAndTreeArePlansToo) {
  auto topo = preset("dgx-a100-superpod", {{"nodes", "4"}});
  std::vector<int> group;
  for (int d = 0; d < 32; ++d) group.push_back(d);
  auto c = make_collective(network::CollectiveKind::all_reduce, group, 1e9);
  c.algorithm = network::Algorithm::hierarchical;
  EXPECT_EQ(network::plan_collective(topo, c).size(), 3u);
  c.algorithm = network::Algorithm::tree;
  auto tree = network::plan_collective(topo, c);
  ASSERT_EQ(tree.size(), 1u);
  // NCCL's trees: per rail channel (8), a chain inside each of the 4 servers (7 edges) and two binary
  // trees across them (3 edges each), every edge both ways.
  EXPECT_EQ(tree[0].flows.size(), 8u * (4 * 7 * 2 + 2 * 3 * 2));
}

TEST(Collectives, AllToAllAndSendRecv) {
  auto topo = preset("dgx-a100-superpod", {{"nodes", "2"}});
  auto a2a =
      network::plan_collective(topo, make_collective(network::CollectiveKind::all_to_all, {0, 1, 2, 3}, 4e6));
  EXPECT_EQ(a2a[0].flows.size(), 12u);
  EXPECT_DOUBLE_EQ(a2a[0].flows[0].bytes, 1e6);
  auto p2p = network::plan_collective(topo, make_collective(network::CollectiveKind::send_recv, {0, 8}, 1e6));
  EXPECT_EQ(p2p[0].flows.size(), 1u);
  EXPECT_DOUBLE_EQ(network::bus_factor(network::CollectiveKind::all_gather, 4), 0.75);
}

TEST(Collectives, SerialMergeAddsBytesAndLatency) {
  auto topo = preset("dgx-a100-superpod", {{"nodes", "1"}});
  auto p =
      network::plan_collective(topo, make_collective(network::CollectiveKind::all_reduce, {0, 1, 2, 3}, 1e6));
  auto merged = network::serial_merge({p, p, p});
  EXPECT_EQ(merged.flows.size(), p[0].flows.size());
  EXPECT_DOUBLE_EQ(merged.flows[0].bytes, 3 * p[0].flows[0].bytes);
  EXPECT_DOUBLE_EQ(merged.latency, 3 * p[0].latency);
  auto both = network::concurrent({p, p});
  EXPECT_EQ(both[0].flows.size(), 2 * p[0].flows.size());
}
