#include "podsim/workload/wafer/layer_pipelined.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "podsim/core/error.hpp"
#include "podsim/core/units.hpp"
#include "podsim/network/swarm_tree.hpp"
#include "podsim/topology/wafer_cluster.hpp"
#include "podsim/workload/pipeline_assembly.hpp"
#include "podsim/workload/pipeline_schedule.hpp"
#include "podsim/workload/transformer/memory_model.hpp"
#include "podsim/workload/transformer/optimizer_state.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"
#include "podsim/workload/wafer/wafer_step.hpp"

namespace podsim::workload {
namespace {

enum class BlockKind { embedding, layer, head };

struct Block {
  BlockKind kind;
  std::string name;
  double params = 0;
  double activations = 0;  // bytes kept per micro-batch in flight
  double working = 0;      // bytes held once (recomputation working set, logits)
};

std::vector<Block> model_blocks(const WorkloadConfig& w, int mb) {
  const auto& m = w.model;
  double e = element_bytes(w.training.precision);
  double sbh = static_cast<double>(mb) * m.seq_len * m.hidden;
  std::vector<Block> blocks;
  // Tied word embedding: the first and the last region each hold a copy (as Megatron's first and last
  // pipeline stages do).
  blocks.push_back({BlockKind::embedding, "embedding", embedding_params(m), sbh, 0});
  double working = recompute_working_bytes(w, mb, w.training.recompute);
  for (long long l = 0; l < m.layers; ++l)
    blocks.push_back({BlockKind::layer, fmt::format("layer {}", l + 1), layer_params(m),
                      layer_activation_bytes(w, mb, w.training.recompute), working});
  blocks.push_back({BlockKind::head, "output head", static_cast<double>(m.vocab) * m.hidden + 2.0 * m.hidden,
                    0, static_cast<double>(mb) * m.seq_len * m.vocab * (e + 4 + 4)});
  return blocks;
}

MemoryBreakdown block_memory(const WorkloadConfig& w, const Block& b, int in_flight, int mb) {
  double e = element_bytes(w.training.precision);
  MemoryBreakdown mem;
  mem.weights = b.params * e;
  mem.gradients = b.params * 4;  // fp32 gradient accumulation over micro-batches
  mem.optimizer = b.params * optimizer_state_bytes(w.training.optimizer);  // main weights + Adam m and v
  mem.activations = in_flight * b.activations + b.working;
  mem.buffers = 2 * 2 * static_cast<double>(mb) * w.model.seq_len * w.model.hidden * e;  // send + receive
  return mem;
}

BlockCosts block_costs(const WorkloadConfig& w, int mb, const WaferCostModel& cm, const Block& b,
                       const MeshRect& r) {
  switch (b.kind) {
    case BlockKind::embedding: return wafer_embedding_costs(w, mb, cm, r);
    case BlockKind::head: return wafer_head_costs(w, mb, cm, r);
    default: return wafer_layer_costs(w, mb, cm, r);
  }
}

// SRAM the kernels can use per core: the wafer's SRAM spread over all its cores, less the runtime's share.
double usable_sram_per_core(const topology::WaferClusterSpec& spec) {
  return spec.sram_bytes * (1 - spec.profile.sram_reserved_fraction) / static_cast<double>(spec.mesh.cores);
}

struct Layout {
  std::vector<Block> blocks;
  std::vector<int> in_flight;
  std::vector<StageProgram> programs;
  std::optional<Placement> placement;
  int microbatches = 0;
};

Layout plan_layout(const topology::Topology& topo, const WorkloadConfig& w, int mb) {
  const auto& spec = *topo.family<topology::WaferClusterSpec>();
  Layout out;
  out.blocks = model_blocks(w, mb);
  const int n = static_cast<int>(out.blocks.size());
  out.microbatches = static_cast<int>(w.training.global_batch / w.parallel.dp / mb);
  out.programs = build_schedule(Schedule::one_f_one_b, n, out.microbatches, 1);
  out.in_flight = peak_in_flight(out.programs);
  WaferCostModel cm(topo, w.training.precision);
  const double mesh_cores = static_cast<double>(spec.mesh.columns) * spec.mesh.rows;
  auto region_seconds = [&](int b, const MeshRect& r) {
    BlockCosts c = block_costs(w, mb, cm, out.blocks[b], r);
    return c.forward.seconds + c.backward.seconds;
  };
  // Compute of a block = core-seconds it needs. Measured on the whole mesh a small GEMM would look slow
  // (most cores idle), so start from the whole mesh and re-measure each block on the region it got, a few
  // times, keeping the placement whose slowest region is fastest.
  std::vector<double> work, min_cores;
  for (int b = 0; b < n; ++b) {
    work.push_back(region_seconds(b, cm.whole_mesh()));
    min_cores.push_back(block_memory(w, out.blocks[b], out.in_flight[b], mb).total() /
                        usable_sram_per_core(spec));
  }
  double best = 0;
  for (int round = 0; round < 4; ++round) {
    auto placement = place_blocks(work, min_cores, spec.mesh.columns, spec.mesh.rows);
    if (!placement) break;
    double slowest = 0;
    for (int b = 0; b < n; ++b) {
      double t = region_seconds(b, placement->regions[b]);
      slowest = std::max(slowest, t);
      work[b] = t * static_cast<double>(placement->regions[b].cores()) / mesh_cores;
    }
    if (!out.placement || slowest < best) out.placement = std::move(placement), best = slowest;
  }
  return out;
}

std::string ms(double s) {
  return fmt::format("{:.4g} ms", s * 1e3);
}

class Builder {
 public:
  Builder(const topology::Topology& topo, const CerebrasWorkload& cw, int micro_batch)
      : topo_(topo),
        spec_(*topo.family<topology::WaferClusterSpec>()),
        cw_(cw),
        w_(cw.w),
        mb_(micro_batch),
        cm_(topo, w_.training.precision),
        layout_(plan_layout(topo, w_, micro_batch)) {}

  StepPlan describe() {
    StepPlan plan = cerebras_step_plan(cw_, ExecutionMode::layer_pipelined, mb_, cm_);
    plan.graph.lane_kind = "wafer region";
    const int n = static_cast<int>(layout_.blocks.size());
    MemoryBreakdown wafer;
    for (int b = 0; b < n; ++b) {
      MemoryBreakdown mem = block_memory(w_, layout_.blocks[b], layout_.in_flight[b], mb_);
      wafer.weights += mem.weights, wafer.gradients += mem.gradients, wafer.optimizer += mem.optimizer;
      wafer.activations += mem.activations, wafer.buffers += mem.buffers;
      plan.graph.lane_names.push_back(fmt::format("region {} ({})", b, layout_.blocks[b].name));
    }
    wafer.framework = spec_.sram_bytes * spec_.profile.sram_reserved_fraction;
    // Every region is on the same wafer: each lane reports the wafer's memory.
    plan.memory.assign(n, wafer);
    if (!layout_.placement) {
      plan.description = fmt::format("layer-pipelined on one {}: does not fit ({:.1f} GiB needed)",
                                     topo_.device.name, wafer.total() / GiB);
      return plan;
    }
    const Placement& p = *layout_.placement;
    double slowest = 0, total = 0, worst_transfer = 0;
    int slowest_region = 0;
    for (int b = 0; b < n; ++b) {
      costs_.push_back(block_costs(w_, mb_, cm_, layout_.blocks[b], p.regions[b]));
      double t = costs_[b].forward.seconds + costs_[b].backward.seconds;
      total += t;
      if (t > slowest) slowest = t, slowest_region = b;
    }
    for (int b = 0; b + 1 < n; ++b) worst_transfer = std::max(worst_transfer, transfer_seconds(b));
    const int m = layout_.microbatches;
    int by_memory = static_cast<int>(std::count(p.sized_by_memory.begin(), p.sized_by_memory.end(), true));
    plan.metrics = {{"regions", n},
                    {"regions_sized_by_memory", by_memory},
                    {"mesh_bands", p.bands},
                    {"slowest_region_ms", slowest * 1e3},
                    {"mean_region_ms", total / n * 1e3},
                    {"region_imbalance", slowest / (total / n)},
                    {"worst_boundary_transfer_ms", worst_transfer * 1e3},
                    {"pipeline_fill_fraction", static_cast<double>(n - 1) / (m + n - 1)}};
    const MeshRect& sr = p.regions[slowest_region];
    plan.description = fmt::format(
        "layer-pipelined on {} x {}{}: {} regions in {} band(s) of the {} x {} mesh, 1F1B over {} "
        "micro-batches "
        "of {} per system; slowest region {} ({} x {} cores) {} per micro-batch, worst boundary transfer "
        "{}{}",
        w_.parallel.dp, spec_.system_name, w_.parallel.dp > 1 ? " (data parallel)" : "", n, p.bands,
        spec_.mesh.columns, spec_.mesh.rows, m, mb_, plan.graph.lane_names[slowest_region], sr.columns,
        sr.rows, ms(slowest), ms(worst_transfer),
        by_memory ? fmt::format("; {} region(s) sized by their memory, not their compute", by_memory) : "");
    double mesh_cores = static_cast<double>(spec_.mesh.columns) * spec_.mesh.rows;
    for (int b = 0; b < n; ++b) {
      const MeshRect& r = p.regions[b];
      MemoryBreakdown mem = block_memory(w_, layout_.blocks[b], layout_.in_flight[b], mb_);
      plan.notes.push_back(fmt::format(
          "placement: region {} ({}): columns {}-{}, rows {}-{} = {} cores ({:.2f}% of the mesh, target "
          "{:.2f}%); "
          "{} forward + backward per micro-batch; {:.3g} GiB SRAM ({} micro-batches in flight{}){}",
          b, layout_.blocks[b].name, r.column, r.column + r.columns - 1, r.row, r.row + r.rows - 1, r.cores(),
          100.0 * r.cores() / mesh_cores, 100.0 * p.target_cores[b] / mesh_cores,
          ms(costs_[b].forward.seconds + costs_[b].backward.seconds), mem.total() / GiB, layout_.in_flight[b],
          p.sized_by_memory[b] ? ", area set by this memory" : "",
          b + 1 < n ? fmt::format("; {} mesh links to region {}", p.boundary_links[b], b + 1) : ""));
    }
    plan.notes.push_back(
        "regions get mesh area in proportion to their forward + backward time on the whole mesh, never less "
        "than their weights, gradients, optimizer state and in-flight activations need; activations cross "
        "the shared edge of neighbouring regions (closed form: those links carry nothing else)");
    if (w_.parallel.dp > 1)
      plan.notes.push_back(
          "data parallel layer-pipelined training (gradients all-reduced through SwarmX) is podsim's "
          "extension; "
          "Cerebras documents multiple systems for weight streaming");
    if (auto note = ignored_plan_note(cw_); !note.empty()) plan.notes.push_back(note);
    plan.notes.push_back(
        "not modelled: the tied-embedding gradient exchange between the first and last region, weight "
        "sparsity, input data loading, Cerebras' pipelined backpropagation without a per-step flush");
    append_kernels(plan.kernels, "layer 1 forward (its region)", costs_[1].forward);
    append_kernels(plan.kernels, "layer 1 backward (its region)", costs_[1].backward);
    append_kernels(plan.kernels, "output head forward (its region)", costs_.back().forward);
    append_kernels(plan.kernels, "output head backward (its region)", costs_.back().backward);
    return plan;
  }

  StepPlan build() {
    StepPlan plan = describe();
    if (!layout_.placement) {
      const auto& mem = plan.memory.front();
      // The whole model may fit the wafer's SRAM and still no placement give every block the cores its
      // memory needs: name which.
      bool too_big = mem.total() > spec_.sram_bytes;
      throw InfeasibleConfig(
          MemoryShortfall{too_big ? "wafer SRAM" : "wafer SRAM (no placement of the blocks fits)",
                          mem.total(), spec_.sram_bytes},
          fmt::format(
              "layer-pipelined training keeps the whole model on the wafer: {:.1f} GiB (weights {:.1f}, "
              "gradients {:.1f}, optimizer {:.1f}, activations {:.1f}, buffers {:.1f}, runtime {:.1f}) but "
              "a {} has {:.1f} GiB, or no placement of its {} blocks fits each block's memory; use "
              "training.execution_mode: weight_streaming{}",
              mem.total() / GiB, mem.weights / GiB, mem.gradients / GiB, mem.optimizer / GiB,
              mem.activations / GiB, mem.buffers / GiB, mem.framework / GiB, topo_.device.name,
              spec_.sram_bytes / GiB, layout_.blocks.size(),
              mb_ > 1 ? " or a smaller training.micro_batch" : ""));
    }
    const int n = static_cast<int>(layout_.blocks.size());
    TaskGraph& g = plan.graph;
    g.stages = n;
    for (int b = 0; b < n; ++b) {
      g.stage_devices.push_back(0);
      streams_.push_back(g.add_stream(fmt::format("region {} compute", b), b, 0));
    }
    PipelineCallbacks cb;
    cb.compute = [&](int s, const StageStep& step, bool) {
      bool forward = step.pass == Pass::forward;
      g.add_task({.kind = forward ? TaskKind::forward : TaskKind::backward,
                  .stream = streams_[s],
                  .stage = s,
                  .compute_seconds = forward ? costs_[s].forward.seconds : costs_[s].backward.seconds,
                  .microbatch = step.microbatch});
    };
    cb.transfer_plan = [&](int from, int to) {
      int boundary = std::min(from, to);
      auto it = transfer_plan_.find(boundary);
      if (it != transfer_plan_.end()) return it->second;
      // On-wafer transfer in closed form: the boundary's links serve only these two regions.
      plan::CommPhase phase;
      phase.latency = transfer_seconds(boundary);
      return transfer_plan_[boundary] = g.add_plan({phase});
    };
    std::vector<int> flushed = assemble_pipeline(g, layout_.programs, streams_, cb);
    std::vector<int> ready = flushed;
    if (w_.parallel.dp > 1) {
      int all_reduce = g.add_plan(
          network::swarm_all_reduce(topo_, total_params(w_.model) * w_.training.grad_reduce_bytes));
      ready.assign(n, g.add_comm(TaskKind::dp, -1, -1, all_reduce, Category::dp, flushed));
    }
    for (int b = 0; b < n; ++b) {
      const MeshRect& r = layout_.placement->regions[b];
      double bandwidth = spec_.sram_bandwidth * static_cast<double>(r.cores()) /
                         static_cast<double>(spec_.mesh.cores) * spec_.profile.sram_efficiency;
      g.add_compute(TaskKind::optimizer, streams_[b], b,
                    layout_.blocks[b].params * kAdamUpdateBytesPerParam / bandwidth, Category::optimizer,
                    {ready[b]});
    }
    return plan;
  }

 private:
  double transfer_seconds(int boundary) const {
    const Placement& p = *layout_.placement;
    const MeshRect &x = p.regions[boundary], &y = p.regions[boundary + 1];
    double bytes =
        static_cast<double>(mb_) * w_.model.seq_len * w_.model.hidden * element_bytes(w_.training.precision);
    double hops = (std::max(x.columns, x.rows) + std::max(y.columns, y.rows)) / 2.0;
    return bytes / (p.boundary_links[boundary] * spec_.mesh.link_bandwidth) + hops * spec_.mesh.hop_latency;
  }

  const topology::Topology& topo_;
  const topology::WaferClusterSpec& spec_;
  const CerebrasWorkload& cw_;
  const WorkloadConfig& w_;
  int mb_;
  WaferCostModel cm_;
  Layout layout_;
  std::vector<BlockCosts> costs_;
  std::vector<int> streams_;
  std::map<int, int> transfer_plan_;
};

}  // namespace

std::optional<Placement> layer_pipelined_placement(const topology::Topology& topo, const WorkloadConfig& w,
                                                   int micro_batch) {
  return plan_layout(topo, w, micro_batch).placement;
}

StepPlan build_layer_pipelined_step(const topology::Topology& topo, const CerebrasWorkload& cw,
                                    int micro_batch) {
  return Builder(topo, cw, micro_batch).build();
}

StepPlan describe_layer_pipelined_step(const topology::Topology& topo, const CerebrasWorkload& cw,
                                       int micro_batch) {
  return Builder(topo, cw, micro_batch).describe();
}

}  // namespace podsim::workload
