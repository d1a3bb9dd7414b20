// In-network reduction across servers: NVLSTree (NVLink SHARP in each server, NCCL's tree across them;
// nvls_tree_collective.cpp), InfiniBand SHARP (CollNet Direct, `fabric.in_network_reduction: sharp`;
// collnet_collective.cpp) and multi-node NVLS over SHARP, with flows that end at fabric switches, checked
// against the published figures their profiles cite (validation/nccl-busbw.csv) and their closed forms.
#include <gtest/gtest.h>

#include <stdexcept>

#include "podsim/core/error.hpp"
#include "podsim/driver/collective.hpp"
#include "podsim/network/collective.hpp"
#include "podsim/network/link_load.hpp"
#include "podsim/topology/families.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using network::Algorithm;
using network::CollectiveKind;
using podsim::testing::error_of;
using podsim::testing::preset;

namespace {

// n ranks, `per_node` on each server of `gpus` GPUs (the first GPUs of consecutive servers).
network::Collective all_reduce(int n, double bytes, Algorithm a, int per_node = 8, int gpus = 8) {
  std::vector<int> group;
  for (int i = 0; i < n; ++i) group.push_back(i / per_node * gpus + i % per_node);
  auto c = network::make_collective(CollectiveKind::all_reduce, group, bytes);
  c.algorithm = a;
  return c;
}

double seconds(const topology::Topology& topo, const network::Collective& c) {
  return network::idle_plan_time(topo, network::plan_collective(topo, c));
}
double algbw(const topology::Topology& topo, const network::Collective& c) {
  return c.bytes / seconds(topo, c);
}
double busbw(const topology::Topology& topo, const network::Collective& c) {
  return network::bus_factor(c.kind, static_cast<int>(c.group.size())) * algbw(topo, c);
}
Algorithm pick(const topology::Topology& topo, const network::Collective& c) {
  auto a = c;
  a.algorithm = Algorithm::automatic;
  return network::select_collective(topo, a).algorithm;
}

const topology::Overrides kSharp = {{"fabric.in_network_reduction", "sharp"}};

topology::Overrides sharp_with(const std::string& nodes) {
  auto sets = kSharp;
  sets.push_back({"nodes", nodes});
  return sets;
}

constexpr double kGiB = 1 << 30;

}  // namespace

TEST(InNetworkReduction, TheFabricKeyBuildsOneSharpTreePerRail) {
  auto plain = preset("dgx-h100-superpod", {{"nodes", "64"}});
  EXPECT_FALSE(plain.family<topology::GpuClusterData>()->in_network_reduction());  // NCCL's default
  auto topo = preset("dgx-h100-superpod", sharp_with("64"));
  const auto* gpu = topo.family<topology::GpuClusterData>();
  ASSERT_TRUE(gpu->in_network_reduction());
  const auto& up = gpu->reduction_uplinks;
  // GPU 0 of server 0 and of server 40 (another SU): the same rail's leaf tier differs, the spine meets.
  EXPECT_EQ(topo.vertices[up[0][0]].role, "leaf");
  EXPECT_EQ(topo.vertices[up[0][1]].role, "spine");
  EXPECT_EQ(up[0][2], -1);  // one spine group: no core tier
  EXPECT_NE(up[0][0], up[40 * 8][0]);
  EXPECT_EQ(up[0][1], up[40 * 8][1]);
  EXPECT_NE(up[0][1], up[1][1]);  // rail 1 has its own tree
  // The router takes a GPU to its rail's leaf (PCIe, then the NIC's cable) and a leaf to its spine.
  topology::Route r;
  topo.router().route(topo.device_vertex[0], up[0][0], r);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(topo.links[r[0].link].cls, topology::LinkClass::pcie);
  EXPECT_EQ(topo.links[r[1].link].cls, topology::LinkClass::infiniband);
  topology::Route s;
  topo.router().route(up[0][1], up[0][0], s);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(topo.links[s[0].link].cls, topology::LinkClass::infiniband);
  topology::Route none;  // another rail's leaf is not on this GPU's tree
  EXPECT_THROW(topo.router().route(topo.device_vertex[0], up[1][0], none), std::logic_error);
  // Past 4 SUs a core level joins the spine groups: the trees reach a core plane.
  auto big = preset("dgx-h100-superpod", sharp_with("600"));
  const auto& big_up = big.family<topology::GpuClusterData>()->reduction_uplinks;
  EXPECT_EQ(big.vertices[big_up[0][2]].role, "core plane");
  EXPECT_EQ(big_up[0][2], big_up[500 * 8][2]);
}

TEST(InNetworkReduction, BadFabricSettingsAreClearErrors) {
  std::string msg = error_of([] { preset("dgx-h100-superpod", {{"fabric.in_network_reduction", "yes"}}); });
  EXPECT_NE(msg.find("in_network_reduction"), std::string::npos) << msg;
  EXPECT_NE(msg.find("sharp"), std::string::npos) << msg;
  // A fabric profile without a collnet calibration cannot run SHARP (DGX-2H: NCCL on V100 + EDR, priors).
  msg = error_of([] { preset("dgx2h-v100", {{"fabric.in_network_reduction", "sharp"}}); });
  EXPECT_NE(msg.find("protocols: collnet"), std::string::npos) << msg;
  EXPECT_NE(msg.find("in_network_reduction"), std::string::npos) << msg;
}

TEST(CollNet, DgxA100MatchesTheMaintainersSharpFigures) {
  // NVIDIA/nccl issue 320: ~20 GB/s per HDR NIC, NVLink-bound at ~110 GB/s algbw (~220 busbw) with 8 NICs.
  auto topo = preset("dgx-a100-superpod", sharp_with("32"));
  auto c = all_reduce(256, 8 * kGiB, Algorithm::collnet_direct);
  EXPECT_NEAR(algbw(topo, c), 110e9, 0.05 * 110e9);
  EXPECT_NEAR(busbw(topo, c), 220e9, 0.05 * 220e9);
  // One GPU per server: the NIC is the limit, 25 GB/s x 0.96 x 0.833 = 20 GB/s, whatever the server count.
  auto one = all_reduce(32, 8 * kGiB, Algorithm::collnet_direct, 1);
  EXPECT_NEAR(algbw(topo, one), 20e9, 0.02 * 20e9);
  auto four = all_reduce(4, 8 * kGiB, Algorithm::collnet_direct, 1);
  EXPECT_NEAR(seconds(topo, four), seconds(topo, one), 0.01 * seconds(topo, one));
  // A ring puts twice the bytes on each NIC: SHARP is faster there.
  auto ring = one;
  ring.algorithm = Algorithm::ring;
  EXPECT_GT(algbw(topo, one), 1.5 * algbw(topo, ring));
}

TEST(CollNet, EveryTreeLinkCarriesTheShareOncePerDirection) {
  // 8 servers in one SU, GPU 0 of each: 8 flows up to the rail-0 leaf and back; with 40 servers over two
  // SUs the leaves also send the share up to spine 0 and get it back, once each, not once per server.
  auto topo = preset("dgx-h100-superpod", sharp_with("64"));
  auto small = network::plan_collective(topo, all_reduce(8, 1e9, Algorithm::collnet_direct, 1));
  ASSERT_EQ(small.size(), 1u);
  EXPECT_EQ(small[0].flows.size(), 16u);
  auto wide = network::plan_collective(topo, all_reduce(40, 1e9, Algorithm::collnet_direct, 1));
  int switch_to_switch = 0;
  for (const auto& f : wide[0].flows)
    if (f.src_vertex >= 0 && f.dst_vertex >= 0) {
      ++switch_to_switch;
      EXPECT_DOUBLE_EQ(f.bytes, wide[0].flows.front().bytes);
    }
  EXPECT_EQ(switch_to_switch, 4);  // 2 leaves x (up, down)
  // More tiers cost latency, not bandwidth.
  EXPECT_GT(wide[0].latency, small[0].latency);
}

TEST(CollNet, OnlyWhereTheFabricReducesAndTheGroupFitsItsTrees) {
  auto plain = preset("dgx-h100-superpod", {{"nodes", "4"}});
  std::string msg =
      error_of([&] { network::plan_collective(plain, all_reduce(32, 1e9, Algorithm::collnet_direct)); });
  EXPECT_NE(msg.find("no in-network reduction"), std::string::npos) << msg;
  EXPECT_NE(pick(plain, all_reduce(32, kGiB, Algorithm::automatic)), Algorithm::collnet_direct);
  auto topo = preset("dgx-h100-superpod", sharp_with("4"));
  // One server, or servers with unequal rank counts: no common tree.
  EXPECT_THROW(network::plan_collective(topo, all_reduce(8, 1e9, Algorithm::collnet_direct)), InputError);
  auto uneven = network::make_collective(CollectiveKind::all_reduce, {0, 1, 2, 8}, 1e9);
  uneven.algorithm = Algorithm::collnet_direct;
  EXPECT_THROW(network::plan_collective(topo, uneven), InputError);
  EXPECT_EQ(network::parse_algorithm("collnet_direct"), Algorithm::collnet_direct);
}

TEST(NvlsTree, H100AtScaleReachesTheGtcFigure) {
  // NVIDIA/nccl issue 1649 (GTC 2024): multi-node NVLSTree all_reduce ~370-380 GB/s busbw on H100.
  auto topo = preset("dgx-h100-superpod", {{"nodes", "32"}});
  auto c = all_reduce(256, 8 * kGiB, Algorithm::nvls_tree);
  EXPECT_NEAR(busbw(topo, c), 375e9, 0.04 * 375e9);
  // Closed form at scale: 2 S / channels per NIC and direction -> busbw 2(n-1)/n x 8 x 48.5 / 2 x 0.966.
  EXPECT_NEAR(busbw(topo, c), 2.0 * 255 / 256 * 8 * 50e9 * 0.97 / 2 * 0.966, 0.02 * busbw(topo, c));
  // NCCL's choice for large all_reduce across servers; small ones stay on LL rings / trees.
  EXPECT_EQ(pick(topo, c), Algorithm::nvls_tree);
  EXPECT_NE(pick(topo, all_reduce(256, 8, Algorithm::automatic)), Algorithm::nvls_tree);
  // The engine simulates it (flows into each NVSwitch and back, the tree over the NICs) to the same time.
  driver::CollectiveRequest r;
  r.topology_file = podsim::testing::source_path("topologies/dgx-h100-superpod.yaml");
  r.topology_sets = {{"nodes", "32"}};
  r.devices = 256;
  r.algorithm = "nvls_tree";
  r.bytes = "8G";
  auto timing = driver::time_collective(r);
  ASSERT_EQ(timing.sizes.size(), 1u);
  EXPECT_NEAR(timing.sizes[0].busbw_GBps, busbw(topo, c) / 1e9, 0.01 * busbw(topo, c) / 1e9);
  EXPECT_EQ(timing.sizes[0].algorithm, "nvls_tree");
}

TEST(NvlsTree, TwoServersAreBoundByTheSwitchAndOptimisticAgainstRoce) {
  // Inside each server the NVLS part is as fast as single-server NVLS (~275 GB/s algbw, nccl-tests issue
  // 212), which bounds two servers: ~515 GB/s busbw. NVIDIA/nccl issue 1221 measured 430 on 8x400G RoCE
  // with NCCL 2.19.3: podsim is optimistic there (said in the profile's provenance).
  auto topo = preset("dgx-h100-superpod", {{"nodes", "2"}});
  double bw = busbw(topo, all_reduce(16, 8 * kGiB, Algorithm::nvls_tree));
  EXPECT_NEAR(bw, 2.0 * 15 / 16 * 450e9 * 0.822 * 0.834 / 1.125, 0.02 * bw);
  EXPECT_GT(bw, 430e9);
  EXPECT_LT(bw, 560e9);
}

TEST(NvlsTree, NeedsNvlsAndTwoRanksPerDomain) {
  auto h100 = preset("dgx-h100-superpod", {{"nodes", "4"}});
  std::string msg =
      error_of([&] { network::plan_collective(h100, all_reduce(4, 1e9, Algorithm::nvls_tree, 1)); });
  EXPECT_NE(msg.find("at least two ranks on each"), std::string::npos) << msg;
  EXPECT_THROW(network::plan_collective(h100, all_reduce(8, 1e9, Algorithm::nvls_tree)), InputError);
  auto a100 = preset("dgx-a100-superpod", {{"nodes", "4"}});  // NVSwitch2: no NVLS
  EXPECT_THROW(network::plan_collective(a100, all_reduce(32, 1e9, Algorithm::nvls_tree)), InputError);
  EXPECT_NE(pick(a100, all_reduce(32, kGiB, Algorithm::automatic)), Algorithm::nvls_tree);
  // On GB200 NVL72 racks the domains are racks: two racks are two domains.
  auto gb200 = preset("dgx-gb200-superpod", {{"nodes", "2"}});
  EXPECT_GT(busbw(gb200, all_reduce(144, 8 * kGiB, Algorithm::nvls_tree, 4, 4)), 0);
}

TEST(NvlsOverSharp, ServersReduceInTheirSwitchAndTheFabricBetween) {
  auto topo = preset("dgx-h100-superpod", sharp_with("8"));
  auto c = all_reduce(64, 8 * kGiB, Algorithm::nvls);
  // Bound by the in-server NVLS (~275 GB/s algbw): above NVLSTree, whose tree moves twice the NIC bytes.
  EXPECT_NEAR(algbw(topo, c), 450e9 * 0.822 * 0.834 / 1.125, 0.02 * algbw(topo, c));
  auto tree = c;
  tree.algorithm = Algorithm::nvls_tree;
  EXPECT_GT(busbw(topo, c), 1.3 * busbw(topo, tree));
  EXPECT_EQ(pick(topo, c), Algorithm::nvls);
  // Without SHARP, nvls stays inside one NVLink domain.
  auto plain = preset("dgx-h100-superpod", {{"nodes", "8"}});
  EXPECT_THROW(network::plan_collective(plain, c), InputError);
}

TEST(Pat, LogarithmicStepsWinSmallGathersAtScaleRingsKeepLargeOnes) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "128"}});
  auto gather = [](int n, double bytes, Algorithm a) {
    std::vector<int> group;
    for (int i = 0; i < n; ++i) group.push_back(8 * i);  // GPU 0 of each server: one rank per server
    auto c = network::make_collective(CollectiveKind::all_gather, group, bytes);
    c.algorithm = a;
    return c;
  };
  // Every rank sends (n-1)/n of the buffer in log2(n) steps; the most data to the nearest rank.
  auto plan = network::plan_collective(topo, gather(128, 1e9, Algorithm::pat));
  ASSERT_EQ(plan.size(), 1u);
  double sent = 0;
  for (const auto& f : plan[0].flows)
    if (f.src == 0) sent += f.bytes;
  EXPECT_NEAR(sent, 1e9 * 127 / 128 / 0.8, 1e-3 * sent);  // over the profile's pat bandwidth factor
  EXPECT_GT(plan[0].flows.front().bytes, plan[0].flows.back().bytes);
  // Latency: 7 network steps against the ring's 127.
  EXPECT_LT(seconds(topo, gather(128, 8, Algorithm::pat)),
            0.5 * seconds(topo, gather(128, 8, Algorithm::ring)));
  EXPECT_EQ(pick(topo, gather(128, 1 << 20, Algorithm::automatic)), Algorithm::pat);
  EXPECT_EQ(pick(topo, gather(128, 4 * kGiB, Algorithm::automatic)), Algorithm::ring);
  auto rs = gather(16, 8, Algorithm::pat);
  rs.kind = CollectiveKind::reduce_scatter;
  EXPECT_GT(seconds(topo, rs), 0);
  // Two ranks on one server: NCCL does not run PAT there.
  auto two = network::make_collective(CollectiveKind::all_gather, {0, 1, 8, 9}, 1e6);
  two.algorithm = Algorithm::pat;
  std::string msg = error_of([&] { network::plan_collective(topo, two); });
  EXPECT_NE(msg.find("one rank per server"), std::string::npos) << msg;
  EXPECT_NE(pick(topo, two), Algorithm::pat);
}
