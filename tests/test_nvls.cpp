// NVLink SHARP (NVLS): flows that end at a switch (plan::to_switch / from_switch) routed by the topology's
// router and simulated by the engine like any other, the nvls all_reduce (nvls_collective.cpp), and the
// `auto` choice that picks it where NCCL does (one NVSwitch domain, mid-size and large messages).
#include <gtest/gtest.h>

#include <stdexcept>

#include "podsim/core/error.hpp"
#include "podsim/driver/collective.hpp"
#include "podsim/network/collective.hpp"
#include "podsim/network/link_load.hpp"
#include "podsim/plan/phase_cost.hpp"
#include "podsim/topology/families.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using network::Algorithm;
using network::CollectiveKind;
using network::make_collective;
using podsim::testing::error_of;
using podsim::testing::preset;

namespace {

std::vector<int> first(int n) {
  std::vector<int> g;
  for (int d = 0; d < n; ++d) g.push_back(d);
  return g;
}

network::Collective all_reduce(int n, double bytes, Algorithm a) {
  auto c = make_collective(CollectiveKind::all_reduce, first(n), bytes);
  c.algorithm = a;
  return c;
}

double busbw(const topology::Topology& topo, const network::Collective& c) {
  double t = network::idle_plan_time(topo, network::plan_collective(topo, c));
  return network::bus_factor(c.kind, static_cast<int>(c.group.size())) * c.bytes / t;
}

}  // namespace

TEST(FlowToSwitch, RoutesOverTheGpusNvlinkPortBothWays) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "2"}});
  const auto* gpu = topo.family<topology::GpuClusterData>();
  ASSERT_NE(gpu, nullptr);
  int sw = gpu->nvswitch_of(3);
  EXPECT_EQ(topo.vertices[sw].role, "nvswitch");
  EXPECT_EQ(gpu->nvswitch_of(7), sw);
  EXPECT_NE(gpu->nvswitch_of(8), sw);  // the other server's switch
  topology::Route up, down;
  topo.router().route(topo.device_vertex[3], sw, up);
  topo.router().route(sw, topo.device_vertex[3], down);
  ASSERT_EQ(up.size(), 1u);
  ASSERT_EQ(down.size(), 1u);
  EXPECT_EQ(up[0].link, down[0].link);
  EXPECT_NE(up[0].forward, down[0].forward);
  EXPECT_EQ(topo.links[up[0].link].cls, topology::LinkClass::nvlink);
  topology::Route none;  // a switch that is not the GPU's own: no such path
  EXPECT_THROW(topo.router().route(topo.device_vertex[3], gpu->nvswitch_of(8), none), std::logic_error);
}

TEST(FlowToSwitch, PhaseLoadCountsTheSwitchEndsBytes) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "1"}});
  int sw = topo.family<topology::GpuClusterData>()->nvswitch_of(0);
  plan::CommPhase phase;
  phase.flows = {plan::to_switch(0, sw, 3e9), plan::to_switch(1, sw, 1e9), plan::from_switch(sw, 0, 2e9)};
  plan::PhaseLoadScratch scratch;
  auto load = plan::phase_load(topo, phase, scratch);
  EXPECT_EQ(load.link_dirs.size(), 3u);  // GPU 0 up, GPU 1 up, GPU 0 down
  EXPECT_NEAR(load.transfer, 3e9 / (450e9 * 0.822), 1e-12);
  EXPECT_FALSE(plan::moves_nothing(phase.flows[0]));
  EXPECT_TRUE(plan::moves_nothing(plan::to_switch(0, sw, 0)));
}

TEST(Nvls, EightH100BusBandwidthIsNcclTestsNvlsRange) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "1"}});
  auto c = all_reduce(8, 8.0 * (1 << 30), Algorithm::nvls);
  double bw = busbw(topo, c);
  // nccl-tests (validation/nccl-busbw.csv, issue 212): ~480 GB/s with NVLS, against ~370 for the ring.
  EXPECT_GT(bw, 450e9);
  EXPECT_LT(bw, 485e9);
  EXPECT_GT(bw, 1.2 * busbw(topo, all_reduce(8, c.bytes, Algorithm::ring)));
  // Closed form: S (1 + 1/n) per port and direction at 450 GB/s x 0.822 x the nvls bandwidth factor.
  double port = 450e9 * 0.822 * 0.834;
  EXPECT_NEAR(bw, 1.75 * port / 1.125, 0.01 * bw);
  // The engine simulates the switch-ended flows (SimGrid hosts at the NVSwitch vertex) to the same time.
  driver::CollectiveRequest r;
  r.topology_file = podsim::testing::source_path("topologies/dgx-h100-superpod.yaml");
  r.topology_sets = {{"nodes", "1"}};
  r.algorithm = "nvls";
  r.bytes = "8G";
  auto timing = driver::time_collective(r);
  ASSERT_EQ(timing.sizes.size(), 1u);
  EXPECT_NEAR(timing.sizes[0].busbw_GBps, bw / 1e9, 0.01 * bw / 1e9);
  EXPECT_EQ(timing.sizes[0].algorithm, "nvls");
}

TEST(Nvls, AutoPicksNvlsInsideOneNvswitchForLargeMessagesOnly) {
  auto h100 = preset("dgx-h100-superpod", {{"nodes", "2"}});
  auto pick = [&](const topology::Topology& t, int n, double bytes) {
    return network::select_collective(t, all_reduce(n, bytes, Algorithm::automatic)).algorithm;
  };
  EXPECT_EQ(pick(h100, 8, 1 << 30), Algorithm::nvls);
  EXPECT_EQ(pick(h100, 8, 64 << 20), Algorithm::nvls);
  EXPECT_NE(pick(h100, 8, 8), Algorithm::nvls);         // latency-bound: ring / LL
  EXPECT_NE(pick(h100, 16, 1 << 30), Algorithm::nvls);  // two servers: no single NVLink domain
  auto a100 = preset("dgx-a100-superpod", {{"nodes", "1"}});
  EXPECT_NE(pick(a100, 8, 1 << 30), Algorithm::nvls);  // NVSwitch2 has no SHARP
  auto gb200 = preset("dgx-gb200-superpod", {{"nodes", "2"}});
  EXPECT_EQ(pick(gb200, 72, 1 << 30), Algorithm::nvls);  // the whole NVL72 rack is one domain
  EXPECT_NE(pick(gb200, 144, 1 << 30), Algorithm::nvls);
}

TEST(Nvls, AskingForItWhereItCannotRunIsAnInputError) {
  auto a100 = preset("dgx-a100-superpod", {{"nodes", "2"}});
  std::string msg = error_of([&] { network::plan_collective(a100, all_reduce(8, 1e9, Algorithm::nvls)); });
  EXPECT_NE(msg.find("no NVLS in its fabric profile"), std::string::npos) << msg;
  auto h100 = preset("dgx-h100-superpod", {{"nodes", "2"}});
  msg = error_of([&] { network::plan_collective(h100, all_reduce(16, 1e9, Algorithm::nvls)); });
  EXPECT_NE(msg.find("several NVLink domains"), std::string::npos) << msg;
  EXPECT_EQ(network::parse_algorithm("nvls"), Algorithm::nvls);
}

TEST(Nvls, EightB200BusBandwidthIsTheReportedNvlink5Figure) {
  // NVIDIA/nccl issue 1807: 8x B200 all_reduce_perf 830+ GB/s busbw (NCCL 2.27, default algorithm).
  auto topo = preset("dgx-b200-superpod", {{"nodes", "1"}});
  auto c = all_reduce(8, 8.0 * (1 << 30), Algorithm::nvls);
  double bw = busbw(topo, c);
  EXPECT_NEAR(bw, 830e9, 0.02 * 830e9);
  // Closed form: 900 GB/s x 0.822 x the profile's nvls factor x 2(n-1)/(n+1).
  EXPECT_NEAR(bw, 900e9 * 0.822 * 0.722 * 1.75 / 1.125, 0.01 * bw);
  EXPECT_GT(bw, busbw(topo, all_reduce(8, c.bytes, Algorithm::ring)));
  EXPECT_EQ(network::select_collective(topo, all_reduce(8, c.bytes, Algorithm::automatic)).algorithm,
            Algorithm::nvls);
}
