// Bytes per link (report/link_traffic.hpp, `podsim run --links`): closed forms for a ring all-reduce, a
// fat tree whose inter-node bytes land on NIC links, NVLS flows that end at a switch, and plans run by
// several tasks.
#include <gtest/gtest.h>

#include "podsim/driver/simulation.hpp"
#include "podsim/network/collective.hpp"
#include "podsim/report/html.hpp"
#include "podsim/report/link_classes.hpp"
#include "podsim/report/link_traffic.hpp"
#include "podsim/report/summary_text.hpp"
#include "podsim/report/writers.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using network::Algorithm;
using network::CollectiveKind;

namespace {

// Two GPUs joined by one NVLink (the only route is that link, either way).
class OneLink : public topology::Router {
 public:
  void route(int src, int, topology::Route& out) const override { out.push_back({0, src == 0}); }
  std::string describe() const override { return "one link"; }
};

topology::Topology two_gpus(double bandwidth) {
  topology::Topology t;
  t.name = "two gpus";
  for (int d = 0; d < 2; ++d) {
    t.device_vertex.push_back(
        t.add_vertex({topology::VertexKind::device, "gpu" + std::to_string(d), "gpu", 0}));
  }
  t.add_link(0, 1, bandwidth, 1e-6, topology::LinkClass::nvlink);
  t.nodes = 1;
  t.devices_per_node = 2;
  t.set_router(std::make_unique<OneLink>());
  return t;
}

// A graph whose one plan is run by `runs` tasks.
plan::TaskGraph graph_of(plan::CommPlan p, int runs) {
  plan::TaskGraph g;
  int stream = g.add_stream("stage 0 comm", 0, 0, false);
  int plan = g.add_plan(std::move(p));
  for (int i = 0; i < runs; ++i) g.add_comm(plan::TaskKind::dp, stream, 0, plan, plan::Category::dp);
  return g;
}

// Ring all-reduce flows by hand: 2(n-1) steps, each rank sends size/n to its successor per step.
plan::CommPlan ring_all_reduce(int n, double size) {
  plan::CommPhase phase;
  for (int r = 0; r < n; ++r) phase.flows.push_back({r, (r + 1) % n, 2.0 * (n - 1) / n * size});
  return {phase};
}

const report::LinkClassTraffic& cls(const report::LinkTraffic& t, const std::string& name) {
  for (const auto& c : t.classes)
    if (c.cls == name) return c;
  throw std::logic_error("no class " + name);
}

}  // namespace

TEST(LinkTraffic, RingAllReduceOnOneNvlinkIsTwoNMinusOneOverNTimesSize) {
  const double bw = 100e9, size = 1e9, step = 0.05;
  auto topo = two_gpus(bw);
  auto t = report::link_traffic(topo, graph_of(ring_all_reduce(2, size), 1), step);
  ASSERT_EQ(t.classes.size(), 1u);
  const auto& nv = t.classes[0];
  EXPECT_EQ(nv.cls, "nvlink");
  EXPECT_EQ(nv.links, 1);
  EXPECT_EQ(nv.directions_used, 2);
  EXPECT_DOUBLE_EQ(nv.bytes, 2 * size);  // each GPU sends 2(2-1)/2 x size = size, one direction each
  EXPECT_DOUBLE_EQ(nv.capacity, 2 * bw);
  EXPECT_DOUBLE_EQ(nv.busy_at_line_rate_s, size / bw);
  EXPECT_DOUBLE_EQ(nv.utilization, size / (bw * step));
  EXPECT_DOUBLE_EQ(nv.max_link_utilization, size / (bw * step));
  ASSERT_EQ(t.hottest.size(), 2u);
  EXPECT_EQ(t.hottest[0].from, "gpu0");  // equal load: the a->b direction first
  EXPECT_DOUBLE_EQ(t.hottest[0].bytes, size);
  EXPECT_EQ(t.hottest_class(), &t.classes[0]);
}

TEST(LinkTraffic, APlanRunByThreeTasksMovesItsBytesThreeTimes) {
  auto topo = two_gpus(100e9);
  auto g = graph_of(ring_all_reduce(2, 1e9), 3);
  EXPECT_EQ(report::plan_run_counts(g), std::vector<int>{3});
  EXPECT_DOUBLE_EQ(report::link_traffic(topo, g, 1.0).classes[0].bytes, 3 * 2e9);
}

TEST(LinkTraffic, InterNodeRingLandsOnNicLinksNotNvlink) {
  auto topo = podsim::testing::preset("dgx-a100-superpod", {{"nodes", "2"}});
  const double size = 1e9;
  auto c = network::make_collective(CollectiveKind::all_reduce, {0, 8}, size);  // GPU 0 of each server
  c.algorithm = Algorithm::ring;
  auto t = report::link_traffic(topo, graph_of(network::plan_collective(topo, c), 1), 1.0);
  EXPECT_EQ(cls(t, "nvlink").bytes, 0);
  // Each GPU sends 2(2-1)/2 x size = size through its NIC: GPU->NIC and NIC->GPU on both servers.
  EXPECT_DOUBLE_EQ(cls(t, "pcie").bytes, 4 * size);
  EXPECT_EQ(cls(t, "pcie").directions_used, 4);
  EXPECT_GE(cls(t, "infiniband").bytes, 2 * 2 * size);  // NIC->leaf and leaf->NIC at least, both ways
  EXPECT_EQ(t.hottest_class()->cls, "pcie");            // fewer, narrower links than the fabric's
  std::string csv = report::links_csv(t);
  EXPECT_NE(csv.find("class,infiniband,"), std::string::npos);
  EXPECT_NE(csv.find("link,pcie,node0/gpu0->node0/nic0,"), std::string::npos) << csv;
}

TEST(LinkTraffic, NvlsFlowsThatEndAtTheSwitchAreCounted) {
  auto topo = podsim::testing::preset("dgx-h100-superpod", {{"nodes", "1"}});
  std::vector<int> group{0, 1, 2, 3, 4, 5, 6, 7};
  auto c = network::make_collective(CollectiveKind::all_reduce, group, 1e9);
  c.algorithm = Algorithm::nvls;
  auto p = network::plan_collective(topo, c);
  double flow_bytes = 0;
  int switch_ends = 0;
  for (const auto& phase : p)
    for (const auto& f : phase.flows)
      flow_bytes += f.bytes, switch_ends += f.src_vertex >= 0 || f.dst_vertex >= 0;
  ASSERT_GT(switch_ends, 0);
  auto g = graph_of(p, 1);
  auto t = report::link_traffic(topo, g, 1.0);
  EXPECT_DOUBLE_EQ(cls(t, "nvlink").bytes, flow_bytes);  // every flow is one GPU<->NVSwitch hop
  // The trace's link-class detail routes them too (it skipped switch-ending flows before).
  EXPECT_EQ(report::plan_link_classes(topo, g), std::vector<std::string>{"nvlink"});
}

TEST(LinkTraffic, JsonAndSummaryNameTheHottestClass) {
  auto topo = two_gpus(100e9);
  auto t = report::link_traffic(topo, graph_of(ring_all_reduce(2, 1e9), 1), 0.1);
  EXPECT_NE(report::links_summary_line(t).find("hottest class nvlink: 10.0%"), std::string::npos)
      << report::links_summary_line(t);
  EXPECT_NE(report::links_json(t).find("\"busy_at_line_rate_s\":0.01"), std::string::npos);
  report::LinkTraffic idle;
  EXPECT_EQ(report::links_summary_line(idle), "");
}

// End to end: a run asked for links carries them into result.json and the HTML report; one not asked
// does not pay for them.
TEST(LinkTraffic, ARunWithLinksReportsThemEverywhere) {
  driver::RunRequest req{podsim::testing::source_path("topologies/dgx-a100-superpod.yaml"),
                         podsim::testing::source_path("workloads/gpt3-xl.yaml"),
                         {"topology.nodes=8"}};
  EXPECT_FALSE(driver::simulate(req).links.has_value());
  req.links = true;
  auto r = driver::simulate(req);
  ASSERT_TRUE(r.ok()) << r.status_detail;
  ASSERT_TRUE(r.links.has_value());
  EXPECT_GT(cls(*r.links, "infiniband").bytes, 0);  // the gradient rings cross servers
  EXPECT_NE(report::result_json(r).find("\"links\":"), std::string::npos);
  EXPECT_NE(report::run_report_html(r).find("id=\"links\""), std::string::npos);
  EXPECT_NE(report::human_summary(r).find("  links        hottest class"), std::string::npos);
}
