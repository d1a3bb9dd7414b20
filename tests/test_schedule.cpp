// Pipeline schedules: every microbatch runs forward then backward on every chunk; sends and receives
// match; the replayed schedule's bubble has the closed form of 1F1B and of the interleaved schedule.
#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "podsim/engine/replay.hpp"
#include "podsim/workload/pipeline_assembly.hpp"
#include "podsim/workload/pipeline_schedule.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::workload;

namespace {

struct Shape {
  Schedule schedule;
  int p, m, v;
};

const std::vector<Shape> kShapes = {
    {Schedule::one_f_one_b, 4, 8, 1},  {Schedule::one_f_one_b, 8, 3, 1}, {Schedule::one_f_one_b, 1, 5, 1},
    {Schedule::gpipe, 4, 6, 1},        {Schedule::interleaved, 4, 8, 2}, {Schedule::interleaved, 4, 4, 3},
    {Schedule::interleaved, 8, 16, 4}, {Schedule::interleaved, 2, 6, 5},
};

// A pure schedule: forward 1 s and backward 2 s per microbatch and stage (divided among chunks), free
// transfers, or transfers of `transfer_seconds` each. Returns the replayed makespan.
double replay_schedule(const Shape& sh, P2pOverlap overlap = {}, double transfer_seconds = 0,
                       double last_stage_slowdown = 1, int group = 0) {
  auto programs = build_schedule(sh.schedule, sh.p, sh.m, sh.v, false, overlap, group);
  TaskGraph g;
  g.stages = sh.p;
  std::vector<int> streams;
  for (int s = 0; s < sh.p; ++s) streams.push_back(g.add_stream("stage", s, s));
  PipelineCallbacks cb;
  cb.compute = [&](int s, const StageStep& step, bool) {
    Task t;
    t.stream = streams[s];
    t.stage = s;
    t.compute_seconds =
        (step.pass == Pass::forward ? 1.0 : 2.0) / sh.v * (s == sh.p - 1 ? last_stage_slowdown : 1);
    g.add_task(std::move(t));
  };
  // A transfer that takes `transfer_seconds`: its software latency, nothing on the wire.
  int plan = transfer_seconds > 0 ? g.add_plan({plan::CommPhase{{}, transfer_seconds}}) : -1;
  cb.transfer_plan = [plan](int, int) { return plan; };
  assemble_pipeline(g, programs, streams, cb);
  g.topological_order();  // throws on a deadlock
  auto topo = podsim::testing::preset("dgx-a100-superpod", {{"nodes", "1"}});
  return engine::replay(topo, g).makespan;
}

}  // namespace

TEST(Schedule, EveryMicrobatchRunsForwardThenBackwardOnEveryChunk) {
  for (const auto& sh : kShapes) {
    auto programs = build_schedule(sh.schedule, sh.p, sh.m, sh.v);
    ASSERT_EQ(static_cast<int>(programs.size()), sh.p);
    for (int s = 0; s < sh.p; ++s) {
      std::map<std::pair<int, int>, int> state;  // (microbatch, chunk) -> 1 after F, 2 after B
      for (const auto& step : programs[s]) {
        if (!step.compute) continue;
        auto& st = state[{step.microbatch, step.chunk}];
        if (step.pass == Pass::forward) {
          EXPECT_EQ(st, 0) << "F twice, stage " << s;
          st = 1;
        } else {
          EXPECT_EQ(st, 1) << "B before F, stage " << s;
          st = 2;
        }
      }
      int chunks = sh.schedule == Schedule::interleaved ? sh.v : 1;
      EXPECT_EQ(static_cast<int>(state.size()), sh.m * chunks);
      for (const auto& [key, st] : state) EXPECT_EQ(st, 2);
    }
  }
}

// Every stage ends with chunk 0's backward of its last microbatch, in every schedule (with combined 1F1B
// and with microbatch groups too): the plan bound times the data-parallel reductions of a stage's last pass
// (driver/plan_bound.cpp dp_time) as chunk 0's.
TEST(Schedule, EveryStageEndsWithChunkZerosLastBackward) {
  struct Variant {
    Shape shape;
    bool combined;
    int group;
  };
  std::vector<Variant> variants;
  for (const auto& sh : kShapes) variants.push_back({sh, false, 0});
  variants.push_back({{Schedule::none, 1, 6, 1}, true, 0});
  variants.push_back({{Schedule::interleaved, 4, 8, 2}, true, 0});
  variants.push_back({{Schedule::interleaved, 4, 10, 2}, false, 5});
  for (const auto& [sh, combined, group] : variants) {
    auto programs = build_schedule(sh.schedule, sh.p, sh.m, sh.v, combined, {}, group);
    for (int s = 0; s < sh.p; ++s) {
      const StageStep* last = nullptr;
      for (const auto& step : programs[s])
        if (step.compute) last = &step;
      ASSERT_NE(last, nullptr);
      EXPECT_EQ(last->pass, Pass::backward) << "stage " << s << ", v " << sh.v;
      EXPECT_EQ(last->chunk, 0) << "stage " << s << ", v " << sh.v;
    }
  }
}

TEST(Schedule, SendsAndReceivesMatchOnEveryChannel) {
  for (const auto& sh : kShapes) {
    auto programs = build_schedule(sh.schedule, sh.p, sh.m, sh.v);
    std::map<std::tuple<int, int, bool>, int> balance;
    for (int s = 0; s < sh.p; ++s)
      for (const auto& step : programs[s])
        for (const auto& op : step.p2p) {
          int peer = op.next ? (s + 1) % sh.p : (s - 1 + sh.p) % sh.p;
          balance[{op.send ? s : peer, op.send ? peer : s, op.activation}] += op.send ? 1 : -1;
        }
    for (const auto& [ch, b] : balance) EXPECT_EQ(b, 0);
  }
}

TEST(Schedule, PeakActivationsHeldPerStage) {
  auto one_f_one_b = peak_in_flight(build_schedule(Schedule::one_f_one_b, 4, 8, 1));
  EXPECT_EQ(one_f_one_b, (std::vector<int>{4, 3, 2, 1}));
  auto gpipe = peak_in_flight(build_schedule(Schedule::gpipe, 4, 8, 1));
  EXPECT_EQ(gpipe, (std::vector<int>{8, 8, 8, 8}));
  // Interleaved, first stage: (p-1)*2 + (v-1)*p warm-up chunks + 1 (Megatron's schedule).
  auto inter = peak_in_flight(build_schedule(Schedule::interleaved, 4, 8, 2));
  EXPECT_EQ(inter[0], 3 * 2 + 4 + 1);
}

TEST(Schedule, OneFOneBBubbleIsPMinusOneMicrobatchSlots) {
  // (m + p - 1) * (tf + tb) for equal stages and free transfers.
  EXPECT_NEAR(replay_schedule({Schedule::one_f_one_b, 4, 8, 1}), (8 + 3) * 3.0, 1e-9);
  EXPECT_NEAR(replay_schedule({Schedule::gpipe, 4, 8, 1}), (8 + 3) * 3.0, 1e-9);
  EXPECT_NEAR(replay_schedule({Schedule::one_f_one_b, 1, 8, 1}), 8 * 3.0, 1e-9);
}

TEST(Schedule, InterleavingShrinksTheBubbleByTheNumberOfChunks) {
  // (m + (p - 1) / v) * (tf + tb): the bubble is (p - 1)/v microbatch slots.
  for (int v : {2, 4}) {
    double makespan = replay_schedule({Schedule::interleaved, 4, 8, v});
    EXPECT_NEAR(makespan, (8 + 3.0 / v) * 3.0, 1e-9) << "v=" << v;
  }
}

TEST(Schedule, ChunksNeedTheInterleavedSchedule) {
  // gpipe and 1f1b run chunk 0 only: chunks > 1 would drop the other chunks' layers (issue 11).
  EXPECT_THROW(build_schedule(Schedule::one_f_one_b, 4, 8, 2), std::invalid_argument);
  EXPECT_THROW(build_schedule(Schedule::gpipe, 4, 8, 4), std::invalid_argument);
  EXPECT_THROW(build_schedule(Schedule::interleaved, 1, 8, 2), std::invalid_argument);
  // Every chunk of the interleaved schedule is run forward and backward m times on every stage.
  auto programs = build_schedule(Schedule::interleaved, 4, 8, 4);
  for (const auto& prog : programs) {
    std::map<int, int> per_chunk;
    for (const auto& step : prog)
      if (step.compute) per_chunk[step.chunk]++;
    EXPECT_EQ(per_chunk.size(), 4u);
    for (const auto& [chunk, n] : per_chunk) EXPECT_EQ(n, 2 * 8) << "chunk " << chunk;
  }
}

// Combined 1F1B (moe.overlap: combined_1f1b): one more warm-up forward than the interleaved schedule, then
// each steady-state forward marked and followed at once by a backward of an earlier microbatch; every
// microbatch still runs forward then backward on every chunk, sends and receives match, and the programs
// replay without a deadlock. Without a pipeline: F0, (F1 B0), (F2 B1), ..., B(m-1).
TEST(Schedule, CombinedOneFOneBPairsEachSteadyForwardWithTheNextBackward) {
  const std::vector<Shape> shapes = {{Schedule::interleaved, 4, 8, 2},
                                     {Schedule::interleaved, 8, 16, 4},
                                     {Schedule::interleaved, 2, 6, 3},
                                     {Schedule::interleaved, 4, 4, 2}};
  for (const auto& sh : shapes) {
    auto plain = build_schedule(sh.schedule, sh.p, sh.m, sh.v);
    auto combined = build_schedule(sh.schedule, sh.p, sh.m, sh.v, true);
    auto plain_peak = peak_in_flight(plain), combined_peak = peak_in_flight(combined);
    int total = sh.m * sh.v;
    std::map<std::tuple<int, int, bool>, int> balance;
    for (int s = 0; s < sh.p; ++s) {
      const auto& prog = combined[s];
      std::map<std::pair<int, int>, int> state;
      int warmup = 0, pairs = 0;
      bool steady = false;
      for (size_t i = 0; i < prog.size(); ++i) {
        const auto& step = prog[i];
        for (const auto& op : step.p2p) {
          int peer = op.next ? (s + 1) % sh.p : (s - 1 + sh.p) % sh.p;
          balance[{op.send ? s : peer, op.send ? peer : s, op.activation}] += op.send ? 1 : -1;
        }
        if (!step.compute) continue;
        auto& st = state[{step.microbatch, step.chunk}];
        EXPECT_EQ(st, step.pass == Pass::forward ? 0 : 1) << "stage " << s << " step " << i;
        st = step.pass == Pass::forward ? 1 : 2;
        if (step.pass == Pass::backward) steady = true;
        if (!steady && !step.combined_with_next) ++warmup;
        if (!step.combined_with_next) continue;
        ++pairs;
        EXPECT_EQ(step.pass, Pass::forward);
        ASSERT_LT(i + 1, prog.size());
        EXPECT_TRUE(prog[i + 1].compute && prog[i + 1].pass == Pass::backward) << "stage " << s;
      }
      for (const auto& [key, st] : state) EXPECT_EQ(st, 2);
      // Megatron-Core since its tunable schedule (4295be1a6c, core 0.10): all warm-up only where the
      // warm-up reaches every pass, also when m = p (the later stages then have a steady state).
      int plain_warmup = std::min((sh.p - s - 1) * 2 + (sh.v - 1) * sh.p, total);
      int expected_warmup = std::min(plain_warmup + 1, total);
      EXPECT_EQ(warmup, expected_warmup) << "stage " << s;
      EXPECT_EQ(pairs, total - expected_warmup) << "stage " << s;
      EXPECT_EQ(combined_peak[s], std::min(plain_peak[s] + 1, total)) << "stage " << s;
    }
    for (const auto& [ch, b] : balance) EXPECT_EQ(b, 0);
    TaskGraph g;
    g.stages = sh.p;
    std::vector<int> streams;
    for (int s = 0; s < sh.p; ++s) streams.push_back(g.add_stream("stage", s, s));
    PipelineCallbacks cb;
    cb.compute = [&](int s, const StageStep&, bool) {
      Task t;
      t.stream = streams[s];
      t.stage = s;
      t.compute_seconds = 1;
      g.add_task(std::move(t));
    };
    cb.transfer_plan = [](int, int) { return -1; };
    assemble_pipeline(g, combined, streams, cb);
    EXPECT_NO_THROW(g.topological_order());
  }
  auto alone = build_schedule(Schedule::none, 1, 4, 1, true)[0];
  std::vector<std::tuple<Pass, int, bool>> order;
  for (const auto& step : alone) order.push_back({step.pass, step.microbatch, step.combined_with_next});
  const auto F = Pass::forward, B = Pass::backward;
  EXPECT_EQ(order, (std::vector<std::tuple<Pass, int, bool>>{{F, 0, false},
                                                             {F, 1, true},
                                                             {B, 0, false},
                                                             {F, 2, true},
                                                             {B, 1, false},
                                                             {F, 3, true},
                                                             {B, 2, false},
                                                             {B, 3, false}}));
  // Megatron-Core needs virtual pipeline stages for it when pipelined.
  EXPECT_THROW(build_schedule(Schedule::one_f_one_b, 4, 8, 1, true), std::invalid_argument);
  EXPECT_THROW(build_schedule(Schedule::interleaved, 4, 8, 1, true), std::invalid_argument);
}

// Megatron-Core's overlap_p2p_comm: the steady state's receives are posted one step early and waited before
// their consumer, its gradient sends waited one backward later; with overlap_p2p_comm_warmup_flush the
// warm-up and flush calls too. The same microbatches run, sends and receives still match, nothing
// deadlocks; free transfers give the same makespan, and costly ones hide behind compute.
TEST(Schedule, OverlappedPipelineCommunicationHidesTransfersBehindCompute) {
  const std::vector<Shape> shapes = {{Schedule::interleaved, 4, 8, 2},
                                     {Schedule::interleaved, 4, 4, 3},
                                     {Schedule::interleaved, 8, 16, 4},
                                     {Schedule::interleaved, 2, 6, 5}};
  for (P2pOverlap overlap : {P2pOverlap{true, false}, P2pOverlap{true, true}}) {
    for (const auto& sh : shapes) {
      auto programs = build_schedule(sh.schedule, sh.p, sh.m, sh.v, false, overlap);
      std::map<std::tuple<int, int, bool>, int> balance;
      int async = 0;
      for (int s = 0; s < sh.p; ++s) {
        std::map<std::pair<int, int>, int> state;
        for (const auto& step : programs[s]) {
          async += step.async_receives;
          for (const auto& op : step.p2p) {
            int peer = op.next ? (s + 1) % sh.p : (s - 1 + sh.p) % sh.p;
            balance[{op.send ? s : peer, op.send ? peer : s, op.activation}] += op.send ? 1 : -1;
          }
          if (step.compute) state[{step.microbatch, step.chunk}]++;
        }
        EXPECT_EQ(static_cast<int>(state.size()), sh.m * sh.v);
        for (const auto& [key, n] : state) EXPECT_EQ(n, 2);
      }
      for (const auto& [ch, b] : balance) EXPECT_EQ(b, 0);
      EXPECT_GT(async, 0);  // m = p: the first stages are all warm-up, the later ones have a steady state
      EXPECT_NEAR(replay_schedule(sh, overlap), replay_schedule(sh), 1e-9)
          << sh.p << " " << sh.m << " " << sh.v;
      for (double slow : {1.0, 1.3}) {  // balanced stages, and a last stage 30% slower (the loss)
        double blocking = replay_schedule(sh, {}, 0.05, slow),
               overlapped = replay_schedule(sh, overlap, 0.05, slow);
        EXPECT_GT(overlapped, replay_schedule(sh, {}, 0, slow)) << "transfers are never free";
        // Stages out of step wait for each other at blocking calls: overlapped receives hide that.
        if (slow > 1 && (sh.m > sh.p || overlap.warmup_flush)) {
          EXPECT_LT(overlapped, blocking) << sh.p << " " << sh.m << " " << sh.v;
        }
        if (sh.m == sh.p && !overlap.warmup_flush) {
          EXPECT_LE(overlapped, blocking + 1e-9);
        }
      }
    }
  }
  // The warm-up and the flush overlapping too never hides less (with m = p most of the step is warm-up and
  // flush: above).
  Shape sh{Schedule::interleaved, 8, 16, 4};
  EXPECT_LE(replay_schedule(sh, {true, true}, 0.05), replay_schedule(sh, {true, false}, 0.05) + 1e-9);
  EXPECT_LT(replay_schedule(sh, {true, true}, 0.05, 1.3),
            replay_schedule(sh, {true, false}, 0.05, 1.3) + 1e-9);
  // Other schedules ignore it.
  for (Shape other : {Shape{Schedule::one_f_one_b, 4, 8, 1}, Shape{Schedule::gpipe, 4, 6, 1}}) {
    auto a = build_schedule(other.schedule, other.p, other.m, other.v, false, {true, true});
    for (const auto& prog : a)
      for (const auto& step : prog) EXPECT_FALSE(step.async_receives);
  }
}

// blocking_transfer_calls (the plan bound's pipeline calls): a stage's compute and one transfer for each of
// its blocking calls never exceed the replayed step, blocking or overlapped; without overlap every call
// between a stage's first and last compute step blocks.
TEST(Schedule, BlockingCallsHoldTheirStageForATransferEach) {
  const double transfer = 0.05;
  for (P2pOverlap overlap : {P2pOverlap{}, P2pOverlap{true, false}, P2pOverlap{true, true}}) {
    for (const auto& sh : kShapes) {
      auto programs = build_schedule(sh.schedule, sh.p, sh.m, sh.v, false, overlap);
      std::vector<int> calls = blocking_transfer_calls(programs);
      ASSERT_EQ(static_cast<int>(calls.size()), sh.p);
      double step = replay_schedule(sh, overlap, transfer);
      for (int s = 0; s < sh.p; ++s) {
        EXPECT_LE(3.0 * sh.m + calls[s] * transfer, step + 1e-9) << sh.p << " " << sh.m << " " << sh.v;
        if (sh.p == 1) EXPECT_EQ(calls[s], 0);
      }
      if (sh.p == 1 || (overlap.steady && sh.schedule == Schedule::interleaved && sh.v > 1)) continue;
      // Blocking: at least one call per chunk pass of a microbatch but the last (1F1B's last stage
      // exchanges one gradient and the next activation in one call between its backward and forward).
      int chunks = sh.schedule == Schedule::interleaved ? sh.v : 1;
      for (int s = 0; s < sh.p; ++s)
        EXPECT_GE(calls[s], sh.m * chunks - 1) << sh.p << " " << sh.m << " " << sh.v << " stage " << s;
    }
  }
}

// Megatron-Core's microbatch_group_size_per_vp_stage (parallel.microbatch_group_size): each chunk runs N
// contiguous microbatches at a time, pp <= N <= m, the last group whole or at least pp long. Every
// microbatch still runs forward then backward on every chunk, sends and receives match, nothing deadlocks;
// the first stage holds (p-1)*2 + (v-1)*N + 1 passes at its peak; the step may have a number of
// microbatches that is not a multiple of pp.
TEST(Schedule, MicrobatchGroupsOfTheInterleavedSchedule) {
  struct Grouped {
    int p, m, v, group;
  };
  for (Grouped g : {Grouped{4, 8, 2, 8}, Grouped{4, 10, 2, 5}, Grouped{4, 10, 3, 6}, Grouped{2, 7, 3, 5},
                    Grouped{4, 12, 2, 4}}) {
    auto programs = build_schedule(Schedule::interleaved, g.p, g.m, g.v, false, {}, g.group);
    std::map<std::tuple<int, int, bool>, int> balance;
    for (int s = 0; s < g.p; ++s) {
      std::map<std::pair<int, int>, int> state;
      for (const auto& step : programs[s]) {
        for (const auto& op : step.p2p) {
          int peer = op.next ? (s + 1) % g.p : (s - 1 + g.p) % g.p;
          balance[{op.send ? s : peer, op.send ? peer : s, op.activation}] += op.send ? 1 : -1;
        }
        if (!step.compute) continue;
        auto& st = state[{step.microbatch, step.chunk}];
        EXPECT_EQ(st, step.pass == Pass::forward ? 0 : 1) << g.m << "/" << g.group << " stage " << s;
        st = step.pass == Pass::forward ? 1 : 2;
      }
      EXPECT_EQ(static_cast<int>(state.size()), g.m * g.v);
    }
    for (const auto& [ch, b] : balance) EXPECT_EQ(b, 0);
    EXPECT_EQ(peak_in_flight(programs)[0], std::min((g.p - 1) * 2 + (g.v - 1) * g.group + 1, g.m * g.v))
        << g.m << "/" << g.group;
    Shape sh{Schedule::interleaved, g.p, g.m, g.v};
    double makespan = replay_schedule(sh, {}, 0, 1, g.group);  // throws on a deadlock
    EXPECT_GE(makespan, g.m * 3.0 - 1e-9);
    // The same programs with overlapped receives replay too, as fast with free transfers.
    EXPECT_NEAR(replay_schedule(sh, {true, true}, 0, 1, g.group), makespan, 1e-9);
  }
  // Group = pp is the default order, step for step.
  auto by_default = build_schedule(Schedule::interleaved, 4, 8, 2);
  auto grouped = build_schedule(Schedule::interleaved, 4, 8, 2, false, {}, 4);
  for (int s = 0; s < 4; ++s) {
    ASSERT_EQ(by_default[s].size(), grouped[s].size());
    for (size_t i = 0; i < grouped[s].size(); ++i) {
      EXPECT_EQ(by_default[s][i].microbatch, grouped[s][i].microbatch);
      EXPECT_EQ(by_default[s][i].chunk, grouped[s][i].chunk);
      EXPECT_EQ(by_default[s][i].p2p.size(), grouped[s][i].p2p.size());
    }
  }
  // Larger groups hold more: breadth-first (N = m) 15 of the first stage's 16 passes, depth-first 11.
  EXPECT_EQ(peak_in_flight(build_schedule(Schedule::interleaved, 4, 8, 2, false, {}, 8))[0], 15);
  EXPECT_EQ(peak_in_flight(by_default)[0], 11);
  // Megatron-Core's limits, in words.
  EXPECT_EQ(interleaved_group_problem(4, 8, 0), "");
  EXPECT_NE(interleaved_group_problem(4, 10, 0).find("multiple of pp=4"), std::string::npos);
  EXPECT_NE(interleaved_group_problem(4, 10, 3).find("between pp=4"), std::string::npos);
  EXPECT_NE(interleaved_group_problem(4, 10, 12).find("between pp=4"), std::string::npos);
  EXPECT_NE(interleaved_group_problem(4, 11, 5).find("last group of 1"), std::string::npos);
  EXPECT_THROW(build_schedule(Schedule::interleaved, 4, 11, 2, false, {}, 5), std::invalid_argument);
}
