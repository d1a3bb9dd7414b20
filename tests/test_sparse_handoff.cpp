// The sparse SimGrid hand-off (engine/sparse_handoff.hpp): a phase handed to SimGrid through spare hosts
// whose routes carry its per-link bytes must give bit-identical times to the dense devices x devices
// parallel task, on contended cases, and must replay phases wider than the dense matrix allows.
#include <gtest/gtest.h>

#include "podsim/engine/replay.hpp"
#include "podsim/plan/phase_cost.hpp"
#include "podsim/workload/workload_model.hpp"
#include "test_helpers.hpp"

using namespace podsim;

namespace {

engine::ReplayOptions options(bool sparse, bool closed_form) {
  engine::ReplayOptions o;
  o.sparse_handoff = sparse;
  o.closed_form_when_alone = closed_form;
  return o;
}

void expect_identical(const engine::ReplayResult& a, const engine::ReplayResult& b) {
  EXPECT_EQ(a.makespan, b.makespan);
  ASSERT_EQ(a.tasks.size(), b.tasks.size());
  int differing = 0;
  for (size_t i = 0; i < a.tasks.size(); ++i)
    differing += a.tasks[i].start != b.tasks[i].start || a.tasks[i].end != b.tasks[i].end;
  EXPECT_EQ(differing, 0);
  EXPECT_EQ(a.simgrid_activities, b.simgrid_activities);
}

}  // namespace

// Pipeline transfers, tensor-parallel rings and gradient rings of 8 replicas on a 4:1 oversubscribed fabric:
// most phases meet another on some link, so SimGrid arbitrates dozens of them.
TEST(SparseHandoff, BitIdenticalToTheDenseMatrixUnderContention) {
  auto topo =
      podsim::testing::preset("dgx-a100-superpod", {{"nodes", "4"}, {"fabric.oversubscription", "4"}});
  auto model = workload::load_workload_model(podsim::testing::source_path("workloads/gpt3-175b.yaml"),
                                             {{"model.layers", "16"},
                                              {"model.hidden", "2048"},
                                              {"model.heads", "16"},
                                              {"model.ffn_hidden", "8192"},
                                              {"parallel.tp", "2"},
                                              {"parallel.pp", "2"},
                                              {"parallel.virtual_stages", "2"},
                                              {"parallel.dp_overlap", "true"},
                                              {"training.global_batch", "64"}},
                                             topo);
  auto plan = model->build(0);
  for (bool closed_form : {false, true}) {
    SCOPED_TRACE(closed_form ? "closed form while alone" : "every phase in SimGrid");
    auto sparse = engine::replay(topo, plan.graph, options(true, closed_form));
    auto dense = engine::replay(topo, plan.graph, options(false, closed_form));
    EXPECT_GT(sparse.simgrid_activities, 20);
    expect_identical(sparse, dense);
  }
}

// Rings of different byte counts crossing on shared links: several coefficient classes per phase.
TEST(SparseHandoff, BitIdenticalWithManyCoefficientClasses) {
  auto topo =
      podsim::testing::preset("dgx-a100-superpod", {{"nodes", "8"}, {"fabric.oversubscription", "2"}});
  plan::TaskGraph g;
  g.stages = 1;
  for (int k = 0; k < 6; ++k) {
    plan::CommPhase phase;
    for (int d = 0; d < 64; d += 1 + k)
      phase.flows.push_back({d, (d * 7 + 8 * (k + 1)) % 64, 1e6 * (1 + d % 5)});
    plan::Task t;
    t.stage = 0;
    t.compute_seconds = 1e-6 * k;
    t.plan = g.add_plan({phase, phase});
    g.add_task(t);
  }
  expect_identical(engine::replay(topo, g, options(true, false)),
                   engine::replay(topo, g, options(false, false)));
  expect_identical(engine::replay(topo, g, options(true, true)),
                   engine::replay(topo, g, options(false, true)));
}

// The same phases handed off again and again, whole and with part of their bytes moved (the hand-off keeps
// each phase's pairs, routes and whole coefficients after its first use), with pairs that carry several
// flows: still bit-identical to the dense matrix.
TEST(SparseHandoff, BitIdenticalWhenPhasesRepeat) {
  auto topo =
      podsim::testing::preset("dgx-a100-superpod", {{"nodes", "4"}, {"fabric.oversubscription", "4"}});
  plan::CommPhase exchange, ring;
  for (int d = 0; d < 32; ++d)
    for (int e : {(d + 8) % 32, (d + 16) % 32}) {
      exchange.flows.push_back({d, e, 3e6 + 1e5 * d});
      exchange.flows.push_back({d, e, 7e5 * (1 + e % 3)});  // a second flow of the same pair
    }
  for (int d = 0; d < 32; ++d) ring.flows.push_back({d, (d + 1) % 32, 2e6});
  plan::TaskGraph g;
  g.stages = 1;
  const int exchanges = g.add_plan({exchange, ring});
  const int rings = g.add_plan({ring});
  for (int k = 0; k < 12; ++k) {
    plan::Task t;
    t.stage = 0;
    t.compute_seconds = 1e-5 * (k % 3);
    t.plan = k % 2 ? exchanges : rings;
    g.add_task(t);
  }
  for (bool closed_form : {false, true}) {
    SCOPED_TRACE(closed_form ? "closed form while alone" : "every phase in SimGrid");
    auto sparse = engine::replay(topo, g, options(true, closed_form));
    EXPECT_GT(sparse.simgrid_activities, 6);
    expect_identical(sparse, engine::replay(topo, g, options(false, closed_form)));
  }
}

// 6,000 devices in one ring: the dense matrix (275 MiB) is refused, the sparse hand-off replays it, and
// alone on its links SimGrid's time is the closed form.
TEST(SparseHandoff, ReplaysAPhaseWiderThanTheDenseMatrixLimit) {
  auto topo = podsim::testing::preset("dgx-a100-superpod", {{"nodes", "1024"}});
  plan::CommPhase wide;
  for (int d = 0; d < 6000; ++d) wide.flows.push_back({d, (d + 1) % 6000, 1e6});
  plan::TaskGraph g;
  g.stages = 1;
  plan::Task t;
  t.stage = 0;
  t.plan = g.add_plan({wide});
  g.add_task(t);
  auto r = engine::replay(topo, g, options(true, false));
  EXPECT_EQ(r.simgrid_activities, 1);
  plan::PhaseLoadScratch scratch;
  auto load = plan::phase_load(topo, wide, scratch);
  EXPECT_NEAR(r.makespan / (load.transfer + load.wire_latency), 1.0, 1e-9);
}
