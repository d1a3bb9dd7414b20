// The SimGrid replay: closed forms on an idle network, contention, timers, determinism.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cmath>

#include "podsim/core/error.hpp"
#include "podsim/engine/replay.hpp"
#include "podsim/network/collective.hpp"
#include "podsim/network/link_load.hpp"
#include "podsim/workload/workload_model.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using network::make_collective;
using plan::Task;
using plan::TaskGraph;

namespace {

TaskGraph single(const plan::CommPlan& plan, double compute = 0) {
  TaskGraph g;
  g.stages = 1;
  int s = g.add_stream("s", 0, 0);
  Task t;
  t.stream = s;
  t.stage = 0;
  t.compute_seconds = compute;
  t.plan = g.add_plan(plan);
  g.add_task(t);
  return g;
}

}  // namespace

TEST(Engine, CollectiveOnIdleNetworkMatchesClosedForm) {
  auto topo = podsim::testing::preset("dgx-a100-superpod", {{"nodes", "4"}});
  std::vector<int> all;
  for (int d = 0; d < 32; ++d) all.push_back(d);
  std::vector<std::vector<int>> groups = {{0, 1, 2, 3, 4, 5, 6, 7}, {0, 8, 16, 24}, all};
  for (const auto& group : groups)
    for (auto kind : {network::CollectiveKind::all_reduce, network::CollectiveKind::all_gather}) {
      auto plan = network::plan_collective(topo, make_collective(kind, group, 256e6));
      double closed = network::idle_plan_time(topo, plan);
      double simulated = engine::replay(topo, single(plan)).makespan;
      EXPECT_NEAR(simulated / closed, 1.0, 1e-4) << network::to_string(kind) << " over " << group.size();
    }
  // And the closed form itself: ring all-reduce over one rank per server is bound by one NIC.
  auto plan = network::plan_collective(
      topo, make_collective(network::CollectiveKind::all_reduce, {0, 8, 16, 24}, 1e9));
  double nic = 25e9 * topo.fabric_profile.efficiency("infiniband");
  auto cost = network::idle_phase_cost(topo, plan[0]);
  EXPECT_NEAR(cost.transfer, 2.0 * 3 / 4 * 1e9 / nic, 1e-9);
}

// idle_link_seconds gives each link direction's seconds for all of a plan's bytes; its busiest equals the
// closed form's transfer of a one-phase plan, and LinkLoadSum adds profiles (each some times over) and reads
// the busiest direction: two transfers of the same flow take twice as long, one on another rail does not
// add to it.
TEST(Engine, LinkSecondsSumAcrossPlans) {
  auto topo = podsim::testing::preset("dgx-a100-superpod", {{"nodes", "4"}});
  auto plan = network::plan_collective(
      topo, make_collective(network::CollectiveKind::all_reduce, {0, 8, 16, 24}, 1e9));
  auto profile = network::idle_link_seconds(topo, plan);
  double busiest = 0;
  for (const auto& [ld, seconds] : profile) busiest = std::max(busiest, seconds);
  EXPECT_NEAR(busiest, network::idle_phase_cost(topo, plan[0]).transfer, 1e-12);
  network::LinkLoadSum sum(topo);
  sum.add(profile, 2);
  EXPECT_NEAR(sum.busiest_and_clear(), 2 * busiest, 1e-12);
  EXPECT_EQ(sum.busiest_and_clear(), 0);  // cleared
  plan::CommPlan rail0{plan::CommPhase{.flows = {{0, 8, 1e9}}}},
      rail1{plan::CommPhase{.flows = {{1, 9, 1e9}}}};
  auto one = network::idle_link_seconds(topo, rail0);
  sum.add(one, 1);
  sum.add(network::idle_link_seconds(topo, rail1), 1);
  double alone = network::idle_phase_cost(topo, rail0[0]).transfer;
  EXPECT_NEAR(sum.busiest_and_clear(), alone, 1e-12);
  sum.add(one, 1);
  sum.add(one, 1);
  EXPECT_NEAR(sum.busiest_and_clear(), 2 * alone, 1e-12);
}

TEST(Engine, TwoFlowsOnOneLinkTakeTwiceAsLong) {
  auto topo = podsim::testing::preset("dgx-a100-superpod", {{"nodes", "2"}});
  plan::CommPhase one;
  one.flows = {{0, 8, 1e9}};  // GPU0 of server 0 to GPU0 of server 1: one rail-0 NIC each way
  TaskGraph g;
  g.stages = 1;
  Task t;
  t.plan = g.add_plan({one});
  g.add_task(t);
  double alone = engine::replay(topo, g).makespan;
  g.add_task(t);  // a second, independent task with the same flow starts at the same time
  auto both = engine::replay(topo, g);
  EXPECT_NEAR(both.makespan / alone, 2.0, 1e-3);
  EXPECT_NEAR(both.tasks[0].end, both.tasks[1].end, 1e-9);
  // A flow on another rail does not slow it down.
  plan::CommPhase other;
  other.flows = {{1, 9, 1e9}};
  g.tasks[1].plan = g.add_plan({other});
  EXPECT_NEAR(engine::replay(topo, g).makespan / alone, 1.0, 1e-3);
}

TEST(Engine, DeviceTimeThenCommunicationInOrder) {
  auto topo = podsim::testing::preset("dgx-a100-superpod", {{"nodes", "1"}});
  auto plan = network::plan_collective(
      topo, make_collective(network::CollectiveKind::all_reduce, {0, 1, 2, 3}, 64e6));
  auto r = engine::replay(topo, single(plan, 1.5));
  EXPECT_NEAR(r.tasks[0].compute_end, 1.5, 1e-12);
  EXPECT_NEAR(r.makespan - 1.5, network::idle_plan_time(topo, plan), 1e-6);
}

TEST(Engine, SameInputSameResult) {
  auto topo = podsim::testing::preset("dgx-a100-superpod", {{"nodes", "2"}});
  auto plan = network::plan_collective(
      topo, make_collective(network::CollectiveKind::all_to_all, {0, 3, 8, 11}, 64e6));
  auto a = engine::replay(topo, single(plan, 0.25));
  auto b = engine::replay(topo, single(plan, 0.25));
  EXPECT_EQ(a.makespan, b.makespan);
  EXPECT_EQ(a.tasks[0].end, b.tasks[0].end);
}

TEST(Engine, CycleIsAnError) {
  auto topo = podsim::testing::preset("dgx-a100-superpod", {{"nodes", "1"}});
  TaskGraph g;
  Task a, b;
  a.deps = {1};
  b.deps = {0};
  g.add_task(a);
  g.add_task(b);
  EXPECT_THROW(g.topological_order(), std::logic_error);
  EXPECT_THROW(engine::replay(topo, g), std::runtime_error);
}

// The closed-form fast path (a phase alone on its links is not sent to SimGrid's solver; it is handed over
// with the bytes it has left as soon as another phase needs one of its links) must give SimGrid's answer,
// on workloads where phases do contend: pipeline transfers and bucketed gradient rings over shared rails,
// all-to-alls over a torus, weight streaming through a SwarmX tree.
TEST(Engine, ClosedFormWhileAloneMatchesSimGridEverywhere) {
  struct Case {
    const char* topology;
    topology::Overrides topo_sets;
    const char* workload;
    workload::Overrides sets;
  };
  std::vector<Case> cases = {
      {"dgx-a100-superpod",
       {{"nodes", "4"}},
       "gpt3-175b",
       {{"model.layers", "16"},
        {"model.hidden", "2048"},
        {"model.heads", "16"},
        {"model.ffn_hidden", "8192"},
        {"parallel.tp", "2"},
        {"parallel.pp", "2"},
        {"parallel.virtual_stages", "2"},
        {"parallel.dp_overlap", "true"},
        {"training.global_batch", "64"}}},
      {"dgx-a100-superpod",
       {{"nodes", "2"}, {"fabric.oversubscription", "4"}},
       "gpt3-175b",
       {{"model.layers", "8"},
        {"model.hidden", "1024"},
        {"model.heads", "8"},
        {"model.ffn_hidden", "4096"},
        {"parallel.tp", "1"},
        {"parallel.pp", "4"},
        {"parallel.schedule", "1f1b"},
        {"parallel.virtual_stages", "1"},
        {"parallel.scatter_gather", "false"},
        {"training.global_batch", "32"}}},
      {"tpu-v3-pod",
       {{"dims", "[4, 4]"}},
       "gshard-moe",
       {{"model.experts", "32"}, {"model.layers", "4"}, {"training.batch_tokens", "65536"}}},
      {"cerebras-cs2-cluster", {{"systems", "8"}}, "gpt3-xl", {{"training.global_batch", "64"}}},
  };
  for (const auto& c : cases) {
    auto topo = podsim::testing::preset(c.topology, c.topo_sets);
    auto model = workload::load_workload_model(
        podsim::testing::source_path(std::string("workloads/") + c.workload + ".yaml"), c.sets, topo);
    auto plan = model->build(0);
    engine::ReplayOptions fast, slow;
    slow.closed_form_when_alone = false;
    auto a = engine::replay(topo, plan.graph, fast);
    auto b = engine::replay(topo, plan.graph, slow);
    SCOPED_TRACE(c.workload + std::string(" on ") + c.topology);
    EXPECT_NEAR(a.makespan / b.makespan, 1.0, 1e-6);
    double worst = 0;
    for (size_t i = 0; i < a.tasks.size(); ++i)
      worst = std::max(worst, std::fabs(a.tasks[i].end - b.tasks[i].end));
    EXPECT_LT(worst, 1e-6 * b.makespan);
    EXPECT_EQ(b.closed_form_phases, 0);
    EXPECT_GT(a.closed_form_phases, 0);
    EXPECT_LT(a.simgrid_activities, b.simgrid_activities);
  }
}

// SimGrid 3.32's selective update walks the constraints that share variables recursively, one stack frame
// (96 bytes) per constraint of the connected component, on the thread running the engine. 16,384 DGX
// nodes overflowed the 8 MiB default stack that way (issue 11). Here a chain of phases that touch each
// other through shared hosts makes one component of ~100,000 constraints, which needs a few MiB of stack:
// under a 1 MiB `ulimit -s` it crashed before the replay sized its own stack from the platform.
TEST(Engine, DeepConstraintComponentDoesNotOverflowTheStack) {
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_STACK, &saved), 0);
  rlimit small = saved;
  small.rlim_cur = 1 << 20;
  ASSERT_EQ(setrlimit(RLIMIT_STACK, &small), 0);
  struct Restore {
    rlimit r;
    ~Restore() { setrlimit(RLIMIT_STACK, &r); }
  } restore{saved};

  const int nodes = 3600;
  // No latency anywhere: every phase takes off at t=0 and all finish together, so SimGrid walks the whole
  // component once (at the first completion) and the test stays fast.
  auto topo = podsim::testing::preset("dgx-a100-superpod", {{"nodes", std::to_string(nodes)},
                                                            {"fabric.hop_latency_us", "0"},
                                                            {"node.pcie_latency_us", "0"},
                                                            {"node.scale_up.latency_us", "0"}});
  const int devices = topo.device_count();
  TaskGraph g;
  g.stages = 1;
  for (int n = 0; n < nodes; ++n) {
    plan::CommPhase phase;  // GPU 0 -> 1 -> ... -> 7 of server n -> GPU 0 of server n + 1
    for (int gpu = 0; gpu < 8; ++gpu) phase.flows.push_back({n * 8 + gpu, (n * 8 + gpu + 1) % devices, 1e6});
    Task t;
    t.stage = 0;
    t.plan = g.add_plan({phase});
    g.add_task(t);
  }
  // A transfer that starts while the chain is in flight: SimGrid then walks the whole component.
  Task late;
  late.stage = 0;
  late.compute_seconds = 1e-6;
  late.plan = g.add_plan({plan::CommPhase{{{1, 0, 1e5}}, 0}});
  g.add_task(late);
  engine::ReplayOptions all_simgrid;
  all_simgrid.closed_form_when_alone = false;
  auto simulated = engine::replay(topo, g, all_simgrid);
  EXPECT_EQ(simulated.simgrid_activities, nodes + 1);
  EXPECT_GT(simulated.hosts + simulated.links, 87000);
  // Only the late transfer and the first server's phase share links: the other phases run in closed form.
  auto closed = engine::replay(topo, g);
  EXPECT_EQ(closed.simgrid_activities, 2);
  EXPECT_NEAR(simulated.makespan / closed.makespan, 1.0, 1e-9);
}

// A phase among more devices than SimGrid's dense parallel-task matrix allows is refused before the replay
// starts, with what to change, rather than exhausting memory halfway (issue 11).
TEST(Engine, PhaseTooWideForSimGridIsAnInputError) {
  auto topo = podsim::testing::preset("dgx-a100-superpod", {{"nodes", "1024"}});
  plan::CommPhase wide;  // 6,000 devices: a 6000 x 6000 matrix of doubles is 275 MiB
  for (int d = 0; d < 6000; ++d) wide.flows.push_back({d, (d + 1) % 6000, 1e6});
  TaskGraph g = single({wide});
  try {
    engine::check_replayable(topo, g);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("fewer data-parallel replicas"), std::string::npos) << e.what();
  }
  plan::CommPhase narrow;  // 5,000 devices: 191 MiB, accepted
  for (int d = 0; d < 5000; ++d) narrow.flows.push_back({d, (d + 1) % 5000, 1e6});
  EXPECT_NO_THROW(engine::check_replayable(topo, single({narrow})));
}
