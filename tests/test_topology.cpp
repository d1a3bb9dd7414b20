// Topology presets: structure, routing and the figures `topo describe` prints.
#include <gtest/gtest.h>

#include <fstream>

#include "podsim/core/error.hpp"
#include "podsim/topology/graph.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using podsim::testing::preset;

TEST(GpuCluster, A100SuperPodShape) {
  auto topo = preset("dgx-a100-superpod", {{"nodes", "140"}});
  EXPECT_EQ(topo.device_count(), 1120);
  auto roles = topo.role_counts();
  EXPECT_EQ(roles["gpu"], 1120);
  EXPECT_EQ(roles["leaf"], 7 * 8);  // 7 SUs x one leaf per rail
  EXPECT_GT(roles["spine"], 0);
  EXPECT_EQ(roles.count("core plane"), 0u);  // 140 nodes fit one leaf/spine pod
  EXPECT_EQ(topology::connected_components(topo), 1);
  EXPECT_TRUE(topology::check_routes(topo, 40).empty());
}

TEST(GpuCluster, CoreLevelAbove140Nodes) {
  auto topo = preset("dgx-a100-superpod", {{"nodes", "384"}});
  EXPECT_GT(topo.role_counts()["core plane"], 0);
  auto problems = topology::check_routes(topo, 48);
  EXPECT_TRUE(problems.empty()) << problems.front();
}

TEST(GpuCluster, BisectionOfNonBlockingFatTree) {
  // Non-blocking: half the servers' NICs can all send across the cut: 64 servers x 8 x 25 GB/s.
  auto topo = preset("dgx-a100-superpod", {{"nodes", "128"}});
  EXPECT_NEAR(topology::bisection_bandwidth(topo).bandwidth, 64 * 8 * 25e9, 1e6);
  // 2:1 oversubscribed leaves halve what crosses the spines.
  auto thin = preset("dgx-a100-superpod", {{"nodes", "128"}, {"fabric.oversubscription", "2"}});
  EXPECT_LT(topology::bisection_bandwidth(thin).bandwidth, 0.75 * 64 * 8 * 25e9);
}

TEST(GpuCluster, CoreOversubscriptionTapersBetweenSpineGroups) {
  // Meta's Llama 3 cluster: pods of 3,072 GPUs at full bisection, 1:7 between them. Two pods here.
  auto meta = preset("meta-h100-roce", {{"nodes", "768"}});
  auto flat = preset("meta-h100-roce", {{"nodes", "768"}, {"fabric.core_oversubscription", "1"}});
  double spine_up = 0, flat_up = 0, spine_down = 0;
  auto core_links = [](const topology::Topology& t, double& up) {
    for (const auto& l : t.links)
      if (t.vertices[l.b].role == "core plane") up = l.bandwidth;
  };
  core_links(meta, spine_up);
  core_links(flat, flat_up);
  for (const auto& l : meta.links)
    if (meta.vertices[l.a].role == "leaf" && meta.vertices[l.b].role == "spine") spine_down += l.bandwidth;
  EXPECT_NEAR(spine_up * 7, flat_up, 1e-6 * flat_up);
  // Per rail and pod, the spines take every leaf uplink (32 servers x 50 GB/s per SU, 12 SUs) and pass a
  // seventh of it up.
  EXPECT_NEAR(flat_up * meta.role_counts()["spine"], spine_down, 1e-6 * spine_down);
  EXPECT_LT(topology::bisection_bandwidth(meta).bandwidth,
            0.2 * topology::bisection_bandwidth(flat).bandwidth);
  EXPECT_TRUE(topology::check_routes(meta, 40).empty());
  bool described = false;
  for (const auto& [k, v] : meta.facts)
    described |= k == "oversubscription" && v.find("7:1 from the spines") != v.npos;
  EXPECT_TRUE(described);
  std::string e = podsim::testing::error_of([] {
    preset("meta-h100-roce", {{"fabric.core_oversubscription", "0.5"}});
  });
  EXPECT_NE(e.find("core_oversubscription"), std::string::npos) << e;
  EXPECT_NE(e.find("7 for 1:7"), std::string::npos) << e;
}

TEST(GpuCluster, RoutesStayOnTheirRailAndUseNvlinkWithinAServer) {
  auto topo = preset("dgx-a100-superpod", {{"nodes", "40"}});
  topology::Route r;
  topo.router().route(topo.device_vertex[0], topo.device_vertex[3], r);  // same server
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(topo.links[r[0].link].cls, topology::LinkClass::nvlink);
  r.clear();
  topo.router().route(topo.device_vertex[2], topo.device_vertex[8 * 25 + 2], r);  // rail 2, other SU
  int ib = 0;
  for (auto h : r) ib += topo.links[h.link].cls == topology::LinkClass::infiniband;
  EXPECT_EQ(ib, 4);  // nic-leaf, leaf-spine, spine-leaf, leaf-nic
  r.clear();
  topo.router().route(topo.device_vertex[1], topo.device_vertex[8 * 25 + 5], r);  // cross rail: PXN hop first
  EXPECT_EQ(topo.links[r[0].link].cls, topology::LinkClass::nvlink);
}

TEST(GpuCluster, DgxTwoHSharesNicsBetweenTwoGpus) {
  auto topo = preset("dgx2h-v100", {{"nodes", "4"}});
  EXPECT_EQ(topo.devices_per_node, 16);
  EXPECT_EQ(topo.rail_peers(0), (std::vector<int>{0, 1}));
  EXPECT_EQ(topo.rail_of(15), 7);
}

TEST(GpuCluster, H100PresetLoadsWithProfiles) {
  auto topo = preset("dgx-h100-superpod");
  EXPECT_EQ(topo.device.sm_count, 132);
  EXPECT_GT(topo.fabric_profile.efficiency("nvlink"), 0.8);
  EXPECT_FALSE(topo.device_profile.provenance.empty());
}

TEST(GpuCluster, BadInputNamesTheField) {
  try {
    preset("dgx-a100-superpod", {{"node.nics", "3"}});
    FAIL() << "3 NICs for 8 GPUs accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("node.nics"), std::string::npos) << e.what();
  }
  EXPECT_THROW(preset("dgx-a100-superpod", {{"nodes", "0"}}), InputError);
  EXPECT_THROW(preset("dgx-a100-superpod", {{"fabric.oversubscription", "0.5"}}), InputError);
  EXPECT_THROW(preset("dgx-a100-superpod", {{"kind", "mesh_of_dreams"}}), InputError);
  EXPECT_THROW(preset("dgx-a100-superpod", {{"device.peak_tflops.fp64x", "1"}}), InputError);
}

TEST(Loader, ProfilePathsThatAreEmptyOrDirectoriesNameFileLineAndField) {
  std::ifstream in(podsim::testing::source_path("topologies/dgx-a100-superpod.yaml"));
  std::string text((std::istreambuf_iterator<char>(in)), {});
  std::string base = podsim::testing::source_path("topologies");
  auto with_line = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return t.replace(at, from.size(), to);
  };
  auto error_of = [&](const std::string& yaml) {
    try {
      podsim::topology::load_topology_text(yaml, "t.yaml", base, {});
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  std::string fabric = "fabric_profile: ../calibration/profiles/nccl-dgx-a100.yaml";
  std::string msg = error_of(with_line(fabric, "fabric_profile: ''"));
  EXPECT_NE(msg.find("t.yaml:39:17: fabric_profile: the fabric calibration profile file name is empty"),
            std::string::npos)
      << msg;
  msg = error_of(with_line(fabric, "fabric_profile: ../calibration"));
  EXPECT_NE(msg.find("t.yaml:39:17: fabric_profile: fabric calibration profile"), std::string::npos) << msg;
  EXPECT_NE(msg.find("is a directory"), std::string::npos) << msg;
  msg = error_of(with_line("profile: ../calibration/profiles/a100-sxm4-80gb.yaml", "profile: ."));
  EXPECT_NE(msg.find("t.yaml:16:12: device.profile: calibration profile"), std::string::npos) << msg;
  EXPECT_NE(msg.find("is a directory"), std::string::npos) << msg;
  msg = error_of(with_line("kind: gpu_cluster", "kind: gpu_cluster\nkind: torus"));
  EXPECT_NE(msg.find("duplicate key 'kind'"), std::string::npos) << msg;
}
