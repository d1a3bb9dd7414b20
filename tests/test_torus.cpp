// The torus family (TPU pods): shape, dimension-order routing, twisted tori, bisection, bad input.
#include <gtest/gtest.h>

#include "podsim/core/error.hpp"
#include "podsim/topology/graph.hpp"
#include "podsim/topology/torus.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using podsim::testing::preset;

namespace {

std::string preset_error(const std::string& name, const topology::Overrides& sets) {
  return podsim::testing::error_of([&] { preset(name, sets); });
}

}  // namespace

TEST(Torus, V3PodIs32x32ChipsOfTwoCores) {
  auto topo = preset("tpu-v3-pod");
  const auto* geo = topo.family<topology::TorusGeometry>();
  ASSERT_NE(geo, nullptr);
  EXPECT_EQ(topo.device_count(), 2048);
  EXPECT_EQ(topo.nodes, 1024);
  EXPECT_EQ(topo.devices_per_node, 2);
  EXPECT_EQ(topo.links.size(), 2048u);  // 4 links per chip, each shared by two chips
  EXPECT_EQ(topo.device_vertex[2 * 37], topo.device_vertex[2 * 37 + 1]);  // two cores, one chip
  EXPECT_EQ(preset("dgx-a100-superpod", {{"nodes", "1"}}).family<topology::TorusGeometry>(), nullptr);
}

TEST(Torus, DimensionOrderShortestWayRound) {
  auto topo = preset("tpu-v3-pod", {{"dims", "[8,8]"}});
  const auto& geo = *topo.family<topology::TorusGeometry>();
  auto hops = [&](std::vector<int> from, std::vector<int> to) {
    topology::Route r;
    geo.route(geo.chip_at(from), geo.chip_at(to), r);
    return r;
  };
  EXPECT_EQ(hops({0, 0}, {7, 0}).size(), 1u);  // the wraparound, not 7 hops
  EXPECT_EQ(hops({0, 0}, {4, 0}).size(), 4u);  // half-way: either way is 4
  auto r = hops({1, 1}, {3, 6});               // 2 in x, then 3 in y (6 -> 1 the short way round)
  ASSERT_EQ(r.size(), 5u);
  // x first: the first two hops stay in row y = 1.
  int at = geo.chip_at({1, 1});
  for (int i = 0; i < 5; ++i) {
    const auto& l = topo.links[r[i].link];
    int next = r[i].forward ? l.b : l.a;
    EXPECT_EQ(r[i].forward ? l.a : l.b, at);
    if (i < 2) {
      EXPECT_EQ(geo.coords(next)[1], 1);
    }
    at = next;
  }
  EXPECT_EQ(at, geo.chip_at({3, 6}));
  // Every route between every pair of chips is a shortest path (BFS), on a ring torus and a mesh.
  EXPECT_TRUE(topology::check_routes(topo, topo.device_count()).empty());
  auto mesh = preset("tpu-v3-pod", {{"dims", "[4,6]"}, {"wraparound", "false"}});
  EXPECT_TRUE(topology::check_routes(mesh, mesh.device_count()).empty());
  EXPECT_EQ(topology::device_diameter(mesh), 3 + 5);
}

TEST(Torus, TwistedTorusRoutesAreShortestAndShrinkTheDiameter) {
  for (const char* dims : {"[4,4,8]", "[4,8,8]"}) {
    auto plain = preset("tpu-v4-pod", {{"dims", dims}});
    auto twisted = preset("tpu-v4-pod", {{"dims", dims}, {"twisted", "true"}});
    auto problems = topology::check_routes(twisted, twisted.device_count());
    EXPECT_TRUE(problems.empty()) << dims << ": " << problems.front();
    EXPECT_LT(topology::device_diameter(twisted), topology::device_diameter(plain)) << dims;
    EXPECT_GT(topology::bisection_bandwidth(twisted).bandwidth,
              topology::bisection_bandwidth(plain).bandwidth);
  }
}

TEST(Torus, BisectionMatchesThePublishedPodFigure) {
  // Cloud TPU docs: a v3 pod's bisection is 6.4 TB/s (validation/tpu-pods.csv); within 10%.
  auto v3 = preset("tpu-v3-pod");
  EXPECT_NEAR(topology::bisection_bandwidth(v3).bandwidth / 6.4e12, 1.0, 0.10);
  EXPECT_EQ(topology::device_diameter(v3), 32);
  // v4: a 16x16x16 torus cut in half crosses 2 x 16 x 16 links of 50 GB/s.
  auto v4 = preset("tpu-v4-pod", {{"dims", "[16,16,16]"}});
  EXPECT_NEAR(topology::bisection_bandwidth(v4).bandwidth, 2 * 256 * 50e9, 1e6);
  EXPECT_EQ(topology::device_diameter(v4), 24);
}

TEST(Torus, BadInputNamesTheFieldAndWhatIsValid) {
  std::string e = preset_error("tpu-v3-pod", {{"dims", "[64,32]"}});
  EXPECT_NE(e.find("dims"), std::string::npos) << e;
  EXPECT_NE(e.find("at most 32"), std::string::npos) << e;
  e = preset_error("tpu-v4-pod", {{"dims", "[4,6,8]"}});
  EXPECT_NE(e.find("multiple of 4"), std::string::npos) << e;
  e = preset_error("tpu-v4-pod", {{"dims", "[4,4,4]"}, {"twisted", "true"}});
  EXPECT_NE(e.find("k x k x 2k"), std::string::npos) << e;
  e = preset_error("tpu-v3-pod", {{"dims", "[32]"}});
  EXPECT_NE(e.find("2 dimensions"), std::string::npos) << e;
  e = preset_error("tpu-v3-pod", {{"ici.links_per_chip", "6"}});
  EXPECT_NE(e.find("4 ICI links"), std::string::npos) << e;
  EXPECT_FALSE(preset_error("tpu-v3-pod", {{"dims", "[0,4]"}}).empty());
}
