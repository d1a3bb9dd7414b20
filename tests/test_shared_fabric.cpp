// Jobs sharing one cluster (issue 19): placement policies and their errors, graphs moved and merged, two
// jobs on disjoint servers of a non-blocking fabric that do not slow each other, and an oversubscribed
// spine that does.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "podsim/driver/shared_fabric.hpp"
#include "podsim/plan/graph_merge.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using podsim::testing::error_of;
using podsim::testing::source_path;

namespace {

driver::SharedFabricRequest two_llamas(int nodes, const std::string& oversubscription, driver::Placement p) {
  driver::SharedFabricRequest r;
  r.topology_file = source_path("topologies/dgx-h100-superpod.yaml");
  r.topology_sets = {fmt::format("topology.nodes={}", nodes),
                     "topology.fabric.oversubscription=" + oversubscription};
  std::vector<std::string> job = {"workload.model.layers=2", "workload.parallel.dp=256",
                                  "workload.training.global_batch=512", "workload.parallel.dp_overlap=false"};
  r.jobs = {{source_path("workloads/llama3-8b.yaml"), job, {}},
            {source_path("workloads/llama3-8b.yaml"), job, {}}};
  r.placement = p;
  return r;
}

}  // namespace

TEST(SharedFabric, PlacementPolicies) {
  using driver::Placement;
  auto packed = driver::place_jobs(8, {3, 2}, Placement::packed, {});
  EXPECT_EQ(packed[0], (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(packed[1], (std::vector<int>{3, 4}));
  auto spread = driver::place_jobs(8, {3, 2}, Placement::spread, {});
  EXPECT_EQ(spread[0], (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(spread[1], (std::vector<int>{1, 3}));
  auto chosen = driver::place_jobs(8, {2, 1}, Placement::explicit_, {{6, 7}, {0}});
  EXPECT_EQ(chosen[0], (std::vector<int>{6, 7}));
  EXPECT_EQ(driver::parse_node_list("0-3,7", "--job-nodes"), (std::vector<int>{0, 1, 2, 3, 7}));
}

TEST(SharedFabric, BadPlacementsAreClearErrors) {
  using driver::Placement;
  EXPECT_NE(error_of([] {
              driver::place_jobs(4, {3, 2}, Placement::packed, {});
            }).find("need 5 servers"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              driver::place_jobs(8, {2, 2}, Placement::explicit_, {{0, 1}, {1, 2}});
            }).find("server 1 is already given"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              driver::place_jobs(8, {2}, Placement::explicit_, {{0, 9}});
            }).find("outside"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              driver::place_jobs(8, {3}, Placement::explicit_, {{0, 1}});
            }).find("needs 3"),
            std::string::npos);
  for (const char* bad : {"", "a-b", "3-1", "1,,2", "-1", "2x", "0-2147483647", "99999999999"})
    EXPECT_NE(error_of([&] { driver::parse_node_list(bad, "--job-nodes"); }).find("--job-nodes"),
              std::string::npos)
        << bad;
  EXPECT_NE(error_of([] { driver::placement_from_string("random"); }).find("packed"), std::string::npos);
  // Not a GPU cluster.
  driver::SharedFabricRequest torus;
  torus.topology_file = source_path("topologies/tpu-v3-pod.yaml");
  torus.jobs = {{source_path("workloads/gshard-moe.yaml"), {}, {}}};
  EXPECT_NE(error_of([&] { driver::simulate_shared_fabric(torus); }).find("gpu_cluster"), std::string::npos);
}

TEST(SharedFabric, GraphsMoveAndMergeKeepingTheirOwnDependencies) {
  plan::TaskGraph a;
  int s = a.add_stream("s", 0, 1);
  a.stages = 1;
  a.stage_devices = {1};
  int t0 = a.add_compute(plan::TaskKind::none, s, 0, 1.0);
  a.add_task({plan::TaskKind::none,
              -1,
              0,
              -1,
              {t0},
              0,
              plan::Category::compute,
              a.add_plan({plan::CommPhase{{{0, 1, 8.0}}, 0}})});
  plan::TaskGraph b = a;
  plan::relocate_devices(b, {10, 11});
  EXPECT_EQ(b.streams[0].device, 11);
  EXPECT_EQ(b.plans[0][0].flows[0].src, 10);
  EXPECT_THROW(plan::relocate_devices(b, {0}), std::logic_error);  // device 11 is not in the map
  plan::TaskGraph merged = a;
  int first = plan::append_graph(merged, b, "job 2");
  EXPECT_EQ(first, 2);
  ASSERT_EQ(merged.tasks.size(), 4u);
  EXPECT_EQ(merged.tasks[3].deps, (std::vector<int>{2}));
  EXPECT_EQ(merged.tasks[3].plan, 1);
  EXPECT_EQ(merged.tasks[2].stream, 1);
  EXPECT_EQ(merged.stages, 2);
  EXPECT_EQ(merged.lane_names.back(), "job 2 pipeline stage 0");
}

TEST(SharedFabric, DisjointServersOfANonBlockingFabricDoNotSlowEachOther) {
  auto r = driver::simulate_shared_fabric(two_llamas(64, "1", driver::Placement::packed));
  ASSERT_EQ(r.jobs.size(), 2u);
  EXPECT_EQ(r.jobs[1].nodes.front(), 32);
  for (const auto& job : r.jobs) {
    EXPECT_GT(job.alone_step, 0);
    EXPECT_NEAR(job.together_step, job.alone_step, 1e-9 * job.alone_step);
    EXPECT_NEAR(job.alone_step, job.alone.step_time(), 1e-9 * job.alone_step);  // same servers' shape
  }
}

TEST(SharedFabric, AnOversubscribedSpineSharedBySpreadJobsSlowsBoth) {
  auto r = driver::simulate_shared_fabric(two_llamas(64, "32", driver::Placement::spread));
  for (const auto& job : r.jobs) {
    EXPECT_GT(job.slowdown(), 0.01) << "both rings cross the same 32:1 spine links";
    EXPECT_LE(job.together_step, r.makespan * (1 + 1e-12));
  }
  // Packed, each job stays inside its own scalable unit: nothing shared.
  auto packed = driver::simulate_shared_fabric(two_llamas(64, "32", driver::Placement::packed));
  for (const auto& job : packed.jobs) EXPECT_NEAR(job.slowdown(), 0, 1e-9);
}
