// Fat-tree tiers of the gpu_cluster family at scale: every switch port budget holds and no trunk is thinner
// than one cable, however many pods a core level joins (the 12,800-server case once had 16 GB/s trunks).
#include <gtest/gtest.h>

#include <map>

#include "podsim/topology/graph.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using podsim::testing::preset;

namespace {

// Cables (of the NIC's rate) on each switch vertex of the given role.
std::map<int, double> cables_at(const topology::Topology& topo, const std::string& role, double cable) {
  std::map<int, double> out;
  for (const auto& l : topo.links)
    for (int v : {l.a, l.b})
      if (topo.vertices[v].role == role) out[v] += l.bandwidth / cable;
  return out;
}

void expect_buildable(const std::string& name, const std::string& nodes, int radix, double nic_GBps) {
  SCOPED_TRACE(name + " at " + nodes + " servers");
  auto topo = preset(name, {{"nodes", nodes}});
  const double cable = nic_GBps * 1e9;
  for (const auto& l : topo.links)
    if (l.cls == topology::LinkClass::infiniband) {
      EXPECT_GE(l.bandwidth, cable * (1 - 1e-9));
    }
  for (const auto& role : {"leaf", "spine"})
    for (const auto& [v, cables] : cables_at(topo, role, cable)) EXPECT_LE(cables, radix + 1e-6) << role;
}

}  // namespace

TEST(FatTreeTiers, NoTrunkThinnerThanACableAndNoSwitchOverItsPorts) {
  expect_buildable("dgx-a100-superpod", "384", 40, 25);    // 3 pods of 7 SUs
  expect_buildable("dgx-h100-superpod", "1024", 64, 50);   // 8 pods of 4 SUs
  expect_buildable("dgx-h100-superpod", "12800", 64, 50);  // 100 pods: more pods than core ports
  expect_buildable("dgx-b200-superpod", "4096", 64, 50);
}

TEST(FatTreeTiers, SpineJOfEveryPodMeetsInCorePlaneJ) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "1024"}});
  // Two servers in different pods (4 SUs of 32 = 128 servers per pod), GPU 0 of each (rail 0).
  topology::Route r;
  topo.router().route(topo.device_vertex[0], topo.device_vertex[8 * 200], r);
  int planes = 0;
  for (const auto& hop : r) {
    const auto& l = topo.links[hop.link];
    for (int v : {l.a, l.b})
      if (topo.vertices[v].role == "core plane") ++planes;
  }
  EXPECT_EQ(planes, 2);  // one link up into the plane, one down out of it
  EXPECT_TRUE(topology::check_routes(topo, 64).empty());
  auto facts = topo.facts;
  bool described = false;
  for (const auto& [k, v] : facts) described |= k == "core switches";
  EXPECT_TRUE(described);
}
