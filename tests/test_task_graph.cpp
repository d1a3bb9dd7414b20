// plan::TaskGraph: the task kinds' names and the add_compute / add_comm helpers the workload kinds use.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "podsim/plan/task_graph.hpp"

using podsim::plan::Category;
using podsim::plan::TaskGraph;
using podsim::plan::TaskKind;

TEST(TaskGraph, EveryTaskKindHasItsOwnName) {
  std::set<std::string> names;
  for (int k = 0; k < static_cast<int>(TaskKind::count); ++k) {
    std::string name = podsim::plan::to_string(static_cast<TaskKind>(k));
    EXPECT_FALSE(name.empty());
    EXPECT_NE(name, "?");
    names.insert(name);
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(TaskKind::count));
  EXPECT_STREQ(podsim::plan::to_string(TaskKind::forward), "forward");
  EXPECT_STREQ(podsim::plan::to_string(TaskKind::count), "?");
}

TEST(TaskGraph, HelpersFillTheTaskAndOrderTheStream) {
  TaskGraph g;
  int stream = g.add_stream("stage 0 compute", 0, 3);
  int plan = g.add_plan({{{{0, 1, 1e6}}, 1e-6}});
  int a = g.add_compute(TaskKind::forward, stream, 0, 2.5, Category::compute);
  int b = g.add_comm(TaskKind::dp, stream, 0, plan, Category::dp, {a});
  int c = g.add_comm(TaskKind::sync, -1, -1, -1, Category::optimizer, {a, b});
  const auto& fa = g.tasks[a];
  EXPECT_EQ(fa.kind, TaskKind::forward);
  EXPECT_EQ(fa.compute_seconds, 2.5);
  EXPECT_EQ(fa.plan, -1);
  EXPECT_TRUE(fa.deps.empty());
  const auto& fb = g.tasks[b];
  EXPECT_EQ(fb.kind, TaskKind::dp);
  EXPECT_EQ(fb.compute_seconds, 0);
  EXPECT_EQ(fb.plan, plan);
  EXPECT_EQ(fb.comm_category, Category::dp);
  EXPECT_EQ(fb.deps, (std::vector<int>{a, a}));  // the explicit dependency, then the stream's previous task
  const auto& fc = g.tasks[c];
  EXPECT_EQ(fc.stream, -1);
  EXPECT_EQ(fc.deps, (std::vector<int>{a, b}));  // not on a stream: only what it was given
  EXPECT_EQ(g.topological_order(), (std::vector<int>{a, b, c}));
}
