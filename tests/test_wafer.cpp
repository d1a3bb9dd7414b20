// Cerebras wafer clusters: the SwarmX tree, layer placement on the mesh, weight streaming and
// layer-pipelined steps, against closed forms and the behaviour Cerebras publishes.
#include <gtest/gtest.h>

#include <set>

#include "podsim/core/error.hpp"
#include "podsim/driver/simulation.hpp"
#include "podsim/engine/replay.hpp"
#include "podsim/network/link_load.hpp"
#include "podsim/network/swarm_tree.hpp"
#include "podsim/topology/graph.hpp"
#include "podsim/topology/wafer_cluster.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"
#include "podsim/workload/wafer/wafer_placement.hpp"
#include "podsim/workload/workload_model.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::workload;

namespace {

topology::Topology cluster(int systems, topology::Overrides more = {}) {
  more.emplace_back("systems", std::to_string(systems));
  return podsim::testing::preset("cerebras-cs2-cluster", more);
}

// GPT-3 XL shrunk to 4 layers so that a step replays in milliseconds (the per-layer shapes are XL's),
// weight streaming even though 4 layers would fit on the wafer.
Overrides small_xl(long long global_batch, Overrides more = {}) {
  Overrides base = {{"model.layers", "4"},
                    {"training.global_batch", std::to_string(global_batch)},
                    {"training.execution_mode", "weight_streaming"}};
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

report::RunResult run(const topology::Topology& topo, const std::string& workload, const Overrides& sets) {
  auto model = load_workload_model(podsim::testing::source_path("workloads/" + workload), sets, topo);
  return driver::simulate(topo, *model);
}

double metric(const report::RunResult& r, const std::string& key) {
  for (const auto& [k, v] : r.plan.metrics)
    if (k == key) return v;
  ADD_FAILURE() << "no metric " << key;
  return 0;
}

bool has_note(const report::RunResult& r, const std::string& text) {
  for (const auto& n : r.plan.notes)
    if (n.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(WaferCluster, SwarmTreeShapeAndRoutes) {
  for (auto [systems, nodes, levels] :
       {std::tuple{1, 1, 1}, {4, 1, 1}, {16, 5, 2}, {17, 8, 3}, {192, 64, 4}}) {
    auto topo = cluster(systems);
    const auto& spec = *topo.family<topology::WaferClusterSpec>();
    EXPECT_EQ(topo.compute_device_count(), systems);
    EXPECT_EQ(static_cast<int>(spec.swarmx.size()), nodes) << systems;
    EXPECT_EQ(spec.swarmx_levels, levels) << systems;
    EXPECT_EQ(spec.tree_edges.size(), spec.swarmx.size() + systems);  // a tree: one parent edge each
    EXPECT_NO_THROW(topology::validate(topo));                        // connected, shortest routes
    topology::Route route;
    topo.router().route(topo.device_vertex[spec.memoryx], topo.device_vertex[systems - 1], route);
    EXPECT_EQ(static_cast<int>(route.size()), levels + 1);  // MemoryX -> root ... leaf -> system
  }
  EXPECT_THROW(cluster(193), InputError);
  EXPECT_THROW(cluster(4, {{"swarmx.fan_out", "1"}}), InputError);
}

TEST(WaferCluster, PresetsCarryTheirDatasheetFacts) {
  auto cs2 = cluster(1);
  EXPECT_EQ(cs2.family<topology::WaferClusterSpec>()->mesh.cores, 850000);
  EXPECT_DOUBLE_EQ(cs2.family<topology::WaferClusterSpec>()->sram_bytes, 40e9);
  EXPECT_DOUBLE_EQ(cs2.device.peak(topology::Precision::fp16), 7.5e15);  // Andromeda: 120 PF / 16
  // 220 Pb/s over 850k cores x 4 links x 2 directions: ~4 GB/s per link direction (32 bit per ~1 GHz clock).
  EXPECT_NEAR(cs2.family<topology::WaferClusterSpec>()->mesh.link_bandwidth, 4.04e9, 0.01e9);
  auto cs1 = podsim::testing::preset("cerebras-cs1");
  EXPECT_EQ(cs1.family<topology::WaferClusterSpec>()->mesh.cores, 400000);
  EXPECT_DOUBLE_EQ(cs1.family<topology::WaferClusterSpec>()->sram_bytes, 18e9);
}

TEST(WaferCluster, BroadcastCarriesThePayloadOncePerTreeEdge) {
  auto topo = cluster(16);
  auto plan = network::swarm_broadcast(topo, 1e9);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].flows.size(), topo.family<topology::WaferClusterSpec>()->tree_edges.size());
  double from_memoryx = 0;
  for (const auto& f : plan[0].flows) {
    EXPECT_DOUBLE_EQ(f.bytes, 1e9);
    if (f.src == topo.family<topology::WaferClusterSpec>()->memoryx) from_memoryx += f.bytes;
  }
  EXPECT_DOUBLE_EQ(from_memoryx, 1e9);  // replication happens in SwarmX, not in MemoryX
  // Bound by the slowest edge whatever the number of systems, and the engine agrees.
  double closed = network::idle_plan_time(topo, plan);
  double achieved = 150e9 * topo.fabric_profile.efficiency("ethernet");
  EXPECT_NEAR(network::idle_phase_cost(topo, plan[0]).transfer, 1e9 / achieved, 1e-9);
  auto deep = cluster(192), flat = cluster(1);
  EXPECT_NEAR(network::idle_plan_time(deep, network::swarm_broadcast(deep, 1e9)) -
                  network::idle_plan_time(flat, network::swarm_broadcast(flat, 1e9)),
              3 * (2e-6 + 2e-6), 1e-9);  // three more levels: a step and a wire hop each
  TaskGraph g;
  g.stages = 1;
  Task t;
  t.stage = 0;
  t.plan = g.add_plan(plan);
  g.add_task(t);
  EXPECT_NEAR(engine::replay(topo, g).makespan / closed, 1.0, 1e-4);
}

TEST(WaferPlacement, RegionsTileTheMeshInProportionToCompute) {
  std::vector<double> work = {0.1, 3, 3, 3, 3, 5, 5, 2, 8};
  std::vector<double> min_cores(work.size(), 100);
  min_cores[0] = 20000;  // a block whose memory needs more than its share of compute
  const int columns = 757, rows = 996;
  auto p = place_blocks(work, min_cores, columns, rows);
  ASSERT_TRUE(p.has_value());
  std::set<std::pair<int, int>> seen;
  long long area = 0;
  for (size_t b = 0; b < work.size(); ++b) {
    const MeshRect& r = p->regions[b];
    EXPECT_GE(r.column, 0);
    EXPECT_GE(r.row, 0);
    EXPECT_LE(r.column + r.columns, columns);
    EXPECT_LE(r.row + r.rows, rows);
    EXPECT_GE(static_cast<double>(r.cores()), min_cores[b]);
    area += r.cores();
    for (int c = r.column; c < r.column + r.columns; c += 7)  // sampled: regions do not overlap
      for (int w = r.row; w < r.row + r.rows; w += 7) EXPECT_TRUE(seen.insert({c, w}).second);
  }
  EXPECT_EQ(area, static_cast<long long>(columns) * rows);  // the bands tile the whole mesh
  EXPECT_NEAR(p->target_cores[0], 20000, 1e-6);             // memory floor honoured exactly
  double rest = static_cast<double>(columns) * rows - 20000, total_work = 0;
  for (size_t b = 1; b < work.size(); ++b) total_work += work[b];
  for (size_t b = 1; b < work.size(); ++b) {
    EXPECT_NEAR(p->target_cores[b], rest * work[b] / total_work, 1e-6);  // proportional to compute
    EXPECT_NEAR(p->regions[b].cores() / p->target_cores[b], 1.0, 0.05);  // after rounding to whole cores
  }
  // Consecutive regions share an edge of mesh links (snake order), so activations cross one boundary.
  ASSERT_EQ(p->boundary_links.size(), work.size() - 1);
  for (size_t b = 0; b + 1 < work.size(); ++b) {
    const MeshRect &x = p->regions[b], &y = p->regions[b + 1];
    bool side = (x.column + x.columns == y.column || y.column + y.columns == x.column) && x.row == y.row;
    bool below = y.row == x.row + x.rows;
    EXPECT_TRUE(side || below) << b;
    EXPECT_GE(p->boundary_links[b], 1);
  }
  // Too much memory for the mesh: no placement.
  EXPECT_FALSE(place_blocks({1, 1}, {500000, 300000}, columns, rows).has_value());
}

TEST(WeightStreaming, StreamedBytesAreWeightsBroadcastPlusGradientsReduced) {
  auto topo = cluster(4);
  auto r = run(topo, "gpt3-xl.yaml", small_xl(64, {{"training.micro_batch", "4"}}));
  ASSERT_EQ(r.status, "ok");
  EXPECT_EQ(r.setting("execution_mode"), "weight_streaming");
  const auto& m = r.plan;
  const int memoryx = topo.family<topology::WaferClusterSpec>()->memoryx;
  double down = 0, up = 0;
  for (const auto& t : m.graph.tasks) {
    if (t.plan < 0) continue;
    for (const auto& f : m.graph.plans[t.plan][0].flows) {
      if (f.src == memoryx && t.comm_category == Category::stream) down += f.bytes;  // weights broadcast
      if (f.dst == memoryx && t.comm_category == Category::dp) up += f.bytes;        // gradients reduced
    }
  }
  ModelConfig model{"xl", 4, 2048, 16, 8192, 2048, 50257};
  double micro_batches = 64 / 4 / 4;
  double lookup = std::min(50257.0, 4.0 * 2048) * 2048 + 2048.0 * 2048;
  double head = embedding_params(model) + 2 * 2048;
  double weights = 2 * 4 * layer_params(model) + head + lookup;  // layers twice (forward, backward)
  double grads = 4 * layer_params(model) + head + lookup;
  EXPECT_NEAR(down / (micro_batches * weights * 2), 1.0, 1e-12);  // fp16 weights
  EXPECT_NEAR(up / (micro_batches * grads * 2), 1.0, 1e-12);      // gradients reduced in fp16 ("same")
  EXPECT_NEAR(metric(r, "streamed_weights_GB") * 1e9, down, 1);
  EXPECT_NEAR(metric(r, "reduced_grads_GB") * 1e9, up, 1);
  // fp32 gradient reduction doubles the bytes up, leaves the bytes down alone.
  auto r32 = run(topo, "gpt3-xl.yaml",
                 small_xl(64, {{"training.micro_batch", "4"}, {"training.grad_reduce_precision", "fp32"}}));
  EXPECT_NEAR(metric(r32, "reduced_grads_GB") / metric(r, "reduced_grads_GB"), 2.0, 1e-9);
  EXPECT_NEAR(metric(r32, "streamed_weights_GB"), metric(r, "streamed_weights_GB"), 1e-9);
}

TEST(WeightStreaming, StreamingOverlapsCompute) {
  auto topo = cluster(4);
  auto r = run(topo, "gpt3-xl.yaml", small_xl(256));
  ASSERT_EQ(r.status, "ok");
  double compute = metric(r, "wafer_compute_s"), stream = metric(r, "weight_stream_s");
  double reduce = metric(r, "grad_reduce_s");
  ASSERT_GT(stream, 0.1 * compute);  // enough streaming that no overlap would show
  EXPECT_LT(r.step_time(), 0.9 * (compute + stream + reduce));
  EXPECT_GE(r.step_time(), std::max({compute, stream, reduce}));
  EXPECT_NEAR(r.mean[Category::compute], compute, 1e-6 * compute);  // the wafer is busy exactly that long
  // Most streaming hides behind compute; what shows is the output head's stream (with 4 layers the tied
  // embedding is a third of the weights and outlasts the layer computing while it arrives).
  EXPECT_LT(r.mean[Category::stream], 0.3 * stream);
  EXPECT_NEAR(r.mean.total(), r.step_time(), 1e-9 * r.step_time());
  EXPECT_TRUE(has_note(r, "step bound by compute"));
  // Cut MemoryX's link until streaming binds: the step is then the stream, with the compute hidden.
  auto slow = run(cluster(4, {{"memoryx.bandwidth_Gbps", "100"}}), "gpt3-xl.yaml", small_xl(256));
  EXPECT_TRUE(has_note(slow, "step bound by weight streaming"));
  EXPECT_GE(slow.step_time(), metric(slow, "weight_stream_s"));
  // ... plus the tail: the last layers' gradient reductions and the weight update (step boundary).
  EXPECT_LT(slow.step_time(), 1.2 * metric(slow, "weight_stream_s") + metric(slow, "weight_update_s"));
  EXPECT_GT(slow.mean[Category::stream], 0.5 * (slow.step_time() - metric(slow, "wafer_compute_s")));
}

TEST(WeightStreaming, EfficiencyIsMonotoneUnderABandwidthCut) {
  for (const char* key :
       {"swarmx.link_bandwidth_Gbps", "memoryx.bandwidth_Gbps", "system.io_bandwidth_Gbps"}) {
    double previous = 1e300;
    for (const char* gbps : {"1200", "600", "300", "150", "75"}) {
      auto r = run(cluster(8, {{key, gbps}}), "gpt3-xl.yaml", small_xl(128));
      ASSERT_EQ(r.status, "ok");
      EXPECT_LE(r.tokens_per_s(), previous * (1 + 1e-9)) << key << "=" << gbps;
      previous = r.tokens_per_s();
    }
    auto fast = run(cluster(8), "gpt3-xl.yaml", small_xl(128));
    EXPECT_LT(previous, 0.5 * fast.tokens_per_s()) << key;  // a 16x cut must hurt
  }
}

TEST(WeightStreaming, ScalingIsNearLinearUntilTheMicroBatchShrinks) {
  // Weak scaling (32 sequences per system): the bytes per SwarmX edge do not grow with N.
  auto one = run(cluster(1), "gpt3-xl.yaml", small_xl(32));
  for (int n : {4, 16}) {
    auto r = run(cluster(n), "gpt3-xl.yaml", small_xl(32 * n));
    EXPECT_GT(r.tokens_per_s() / (n * one.tokens_per_s()), 0.97) << n;
  }
  // Strong scaling of a small batch over a cut SwarmX: past the point where a system's micro-batch has
  // too few tokens to hide a layer's weight stream, adding systems stops paying.
  topology::Overrides cut = {{"swarmx.link_bandwidth_Gbps", "300"}};
  auto base = run(cluster(1, cut), "gpt3-xl.yaml", small_xl(32));
  auto wide = run(cluster(16, cut), "gpt3-xl.yaml", small_xl(32));
  EXPECT_TRUE(has_note(base, "step bound by compute"));
  EXPECT_TRUE(has_note(wide, "step bound by weight streaming"));
  EXPECT_LT(wide.tokens_per_s() / (16 * base.tokens_per_s()), 0.6);
}

TEST(WeightStreaming, Gpt3On16SystemsAndItsErrors) {
  auto topo = cluster(16);
  auto r = run(topo, "gpt3-175b.yaml", {});
  ASSERT_EQ(r.status, "ok");
  EXPECT_EQ(r.devices(), 16);
  EXPECT_EQ(r.setting("execution_mode"), "weight_streaming");
  EXPECT_TRUE(has_note(r, "GPU plan (tp=8, pp=8"));  // the file's Megatron plan is noted, not applied
  EXPECT_LE(r.memory_per_device(), topo.family<topology::WaferClusterSpec>()->sram_bytes);
  EXPECT_NEAR(r.mean.total(), r.step_time(), 1e-9 * r.step_time());
  EXPECT_THROW(run(topo, "gpt3-175b.yaml", {{"parallel.tp", "8"}}), InputError);
  EXPECT_THROW(run(topo, "gpt3-175b.yaml", {{"parallel.pp", "2"}}), InputError);
  EXPECT_THROW(run(topo, "gpt3-175b.yaml", {{"parallel.dp", "8"}}), InputError);
  EXPECT_NO_THROW(run(topo, "gpt3-175b.yaml", {{"parallel.dp", "16"}, {"parallel.tp", "1"}}));
  EXPECT_THROW(run(cluster(7), "gpt3-175b.yaml", {}), InputError);  // 1536 sequences over 7 systems
  // A model too large for MemoryX is reported, not simulated.
  auto big = run(cluster(16, {{"memoryx.capacity_TB", "1"}}), "gpt3-175b.yaml", {});
  EXPECT_EQ(big.status, "out_of_memory");
  EXPECT_NE(big.status_detail.find("MemoryX"), std::string::npos);
}

TEST(LayerPipelined, SmallModelRunsOnOneWaferAndReportsItsPlacement) {
  auto topo = cluster(1);
  auto r = run(topo, "gpt2-small.yaml", {{"training.global_batch", "32"}});
  ASSERT_EQ(r.status, "ok");
  EXPECT_EQ(r.setting("execution_mode"), "layer_pipelined");  // auto: the model fits in SRAM
  const int regions = 12 + 2;
  EXPECT_EQ(r.plan.graph.stages, regions);
  EXPECT_EQ(static_cast<int>(metric(r, "regions")), regions);
  int placement_notes = 0;
  for (const auto& n : r.plan.notes) placement_notes += n.rfind("placement: region", 0) == 0;
  EXPECT_EQ(placement_notes, regions);
  for (const auto& s : r.stages) EXPECT_NEAR(s.total(), r.step_time(), 1e-9 * r.step_time());
  // Throughput is set by the slowest region: m micro-batches take at least m of its forward+backward, and
  // the pipeline adds at most one fill and drain (plus mesh transfers) to that.
  double m = std::stod(r.setting("microbatches")), slowest = metric(r, "slowest_region_ms") * 1e-3;
  EXPECT_GE(r.step_time(), m * slowest);
  EXPECT_LE(r.step_time(),
            (m + regions) * slowest * 1.05 + regions * 2 * metric(r, "worst_boundary_transfer_ms"));
  EXPECT_LE(r.memory_per_device(), topo.family<topology::WaferClusterSpec>()->sram_bytes);
  // Data parallel over SwarmX adds the gradient all-reduce and nothing else.
  auto two = run(cluster(2), "gpt2-small.yaml", {{"training.global_batch", "64"}});
  ASSERT_EQ(two.status, "ok");
  EXPECT_GT(two.mean[Category::dp], 0);
  // GPT-3 175B cannot be layer-pipelined on a wafer: reported as out of memory, with the way out.
  auto big = run(cluster(16), "gpt3-175b.yaml", {{"training.execution_mode", "layer_pipelined"}});
  EXPECT_EQ(big.status, "out_of_memory");
  EXPECT_NE(big.status_detail.find("weight_streaming"), std::string::npos);
}

// Issue 11: execution_mode auto took layer-pipelined whenever the model fit on the wafer, and tried only
// its three largest micro-batches, so auto could be 1.84x slower than weight streaming and a doubled batch
// could halve the step time. auto is now the fastest of both modes' candidates.
TEST(CerebrasAuto, PicksTheFasterModeAndStepTimeGrowsWithTheBatch) {
  auto topo = cluster(16);
  double previous = 0;
  for (const char* gb : {"128", "256", "384", "512"}) {
    auto best = run(topo, "gpt2-small.yaml", {{"training.global_batch", gb}});
    auto lp = run(topo, "gpt2-small.yaml",
                  {{"training.global_batch", gb}, {"training.execution_mode", "layer_pipelined"}});
    auto ws = run(topo, "gpt2-small.yaml",
                  {{"training.global_batch", gb}, {"training.execution_mode", "weight_streaming"}});
    ASSERT_EQ(best.status, "ok") << gb;
    ASSERT_EQ(lp.status, "ok") << gb;
    ASSERT_EQ(ws.status, "ok") << gb;
    EXPECT_LE(best.step_time(), std::min(lp.step_time(), ws.step_time()) * (1 + 1e-9)) << gb;
    EXPECT_GE(best.step_time(), previous) << "global_batch " << gb;
    previous = best.step_time();
    EXPECT_LE(best.mfu(), best.hfu());
    EXPECT_LT(best.hfu(), 1.0);
  }
}

// Issue 11: with full recomputation the layer being recomputed was counted whole on top of its
// checkpoint, so full could need more memory than selective.
TEST(WeightStreaming, FullRecomputeNeverNeedsMoreSramThanSelective) {
  auto topo = cluster(1);
  for (const char* mb : {"1", "4", "16"}) {
    std::vector<double> totals;
    for (const char* recompute : {"full", "selective", "none"}) {
      auto model = load_workload_model(podsim::testing::source_path("workloads/gpt3-xl.yaml"),
                                       {{"model.layers", "2"},
                                        {"training.global_batch", "16"},
                                        {"training.recompute", recompute},
                                        {"training.micro_batch", mb},
                                        {"training.execution_mode", "weight_streaming"}},
                                       topo);
      totals.push_back(model->describe_infeasible(0).memory.front().total());
    }
    EXPECT_LE(totals[0], totals[1]) << "micro_batch " << mb;
    EXPECT_LE(totals[1], totals[2]) << "micro_batch " << mb;
  }
}

// Regression (property seed 100185): blocks sized by their memory came out a few cores short once rounded to
// whole-core rectangles, and a model that fits (73% of the wafer here) was reported out of memory.
TEST(WaferPlacement, MemorySizedBlocksOnAMostlyFullWaferStillGetTheirCores) {
  const int columns = 757, rows = 996;
  const std::vector<double> work = {672, 347, 730, 41, 119, 978, 708, 144};
  const std::vector<double> min_cores = {54118.6, 69234.4, 5971.7, 155451, 2426, 101892, 144814, 0};
  auto p = place_blocks(work, min_cores, columns, rows);
  ASSERT_TRUE(p.has_value());
  long used = 0;
  for (size_t b = 0; b < work.size(); ++b) {
    EXPECT_GE(double(p->regions[b].cores()), min_cores[b]) << "block " << b;
    used += p->regions[b].cores();
  }
  EXPECT_LE(used, long(columns) * rows);
}
