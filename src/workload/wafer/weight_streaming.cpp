#include "podsim/workload/wafer/weight_streaming.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "podsim/core/error.hpp"
#include "podsim/core/units.hpp"
#include "podsim/network/link_load.hpp"
#include "podsim/network/swarm_tree.hpp"
#include "podsim/topology/wafer_cluster.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"
#include "podsim/workload/wafer/wafer_kernels.hpp"
#include "podsim/workload/wafer/wafer_step.hpp"

namespace podsim::workload {
namespace {

// MemoryX holds per parameter: the 16-bit streamed copy, fp32 master weight, Adam m and v, fp32 gradient sum.
constexpr double kMemoryXBytesPerParam = 2 + 4 + 4 + 4 + 4;

// Parameters of the blocks that stream. The output head holds the tied word embedding, the position
// embedding and the final norm; the input embedding lookup needs only the rows of the micro-batch's tokens.
double head_params(const ModelConfig& m) {
  return embedding_params(m) + 2.0 * m.hidden;
}
double lookup_params(const ModelConfig& m, int micro_batch) {
  return std::min<double>(m.vocab, static_cast<double>(micro_batch) * m.seq_len) * m.hidden +
         static_cast<double>(m.seq_len) * m.hidden;
}

std::string seconds(double s) {
  return s >= 1 ? fmt::format("{:.3g} s", s) : fmt::format("{:.3g} ms", s * 1e3);
}

class Builder {
 public:
  Builder(const topology::Topology& topo, const CerebrasWorkload& cw, int micro_batch)
      : topo_(topo),
        spec_(*topo.family<topology::WaferClusterSpec>()),
        cw_(cw),
        w_(cw.w),
        mb_(micro_batch),
        cm_(topo, w_.training.precision) {
    m_ = static_cast<int>(w_.training.global_batch / w_.parallel.dp / mb_);
    wb_ = element_bytes(w_.training.precision);
    gb_ = w_.training.grad_reduce_bytes;
    MeshRect mesh = cm_.whole_mesh();
    layer_ = wafer_layer_costs(w_, mb_, cm_, mesh);
    embed_ = wafer_embedding_costs(w_, mb_, cm_, mesh);
    head_ = wafer_head_costs(w_, mb_, cm_, mesh);
  }

  StepPlan describe() {
    StepPlan plan = cerebras_step_plan(cw_, ExecutionMode::weight_streaming, mb_, cm_);
    plan.memory = {weight_streaming_wafer_memory(topo_, w_, mb_)};
    plan.graph.lane_kind = fmt::format("{} system", spec_.system_name);
    plan.graph.lane_names = {fmt::format("{} 0 (all {} alike)", spec_.system_name, w_.parallel.dp)};
    append_kernels(plan.kernels, "layer forward (whole mesh)", layer_.forward);
    append_kernels(plan.kernels, "layer backward (whole mesh)", layer_.backward);
    append_kernels(plan.kernels, "embedding forward", embed_.forward);
    append_kernels(plan.kernels, "embedding backward", embed_.backward);
    append_kernels(plan.kernels, "output head forward", head_.forward);
    append_kernels(plan.kernels, "output head backward", head_.backward);
    bound_summary(plan);
    return plan;
  }

  StepPlan build() {
    StepPlan plan = describe();
    check_fits(plan.memory[0]);
    build_graph();
    plan.graph.stages = 1;
    plan.graph.stage_devices = {0};
    std::swap(plan.graph.streams, g_.streams);
    std::swap(plan.graph.tasks, g_.tasks);
    std::swap(plan.graph.plans, g_.plans);
    return plan;
  }

 private:
  // One position in the per-micro-batch sequence the wafer runs.
  struct Position {
    const char* what;
    double compute = 0;
    double stream_params = 0;  // weights streamed in before it (0: none)
    double grad_params = 0;    // gradients streamed out after it (0: none)
    int block = -1;            // gradient block: layer index, layers = output head, layers + 1 = input rows
  };

  std::vector<Position> sequence() const {
    const auto& m = w_.model;
    double layer = layer_params(m);
    std::vector<Position> seq;
    seq.push_back({"embedding forward", embed_.forward.seconds, lookup_params(m, mb_), 0, -1});
    for (long long l = 0; l < m.layers; ++l)
      seq.push_back({"layer forward", layer_.forward.seconds, layer, 0, -1});
    seq.push_back({"output head forward + backward", head_.forward.seconds + head_.backward.seconds,
                   head_params(m), head_params(m), static_cast<int>(m.layers)});
    for (long long l = m.layers - 1; l >= 0; --l)
      seq.push_back({"layer backward", layer_.backward.seconds, layer, layer, static_cast<int>(l)});
    // The tied embedding's update waits for the input embedding's gradient rows, the last to arrive.
    seq.push_back({"embedding backward", embed_.backward.seconds, 0, lookup_params(m, mb_),
                   static_cast<int>(m.layers) + 1});
    return seq;
  }

  void bound_summary(StepPlan& plan) {
    double compute = 0, stream = 0, reduce = 0, stream_bytes = 0, reduce_bytes = 0;
    for (const auto& p : sequence()) {
      compute += p.compute;
      if (p.stream_params > 0) {
        stream += network::idle_plan_time(topo_, network::swarm_broadcast(topo_, p.stream_params * wb_));
        stream_bytes += p.stream_params * wb_;
      }
      if (p.grad_params > 0) {
        reduce += network::idle_plan_time(topo_, network::swarm_reduce(topo_, p.grad_params * gb_));
        reduce_bytes += p.grad_params * gb_;
      }
    }
    double update = update_seconds(total_params(w_.model));
    compute *= m_, stream *= m_, reduce *= m_, stream_bytes *= m_, reduce_bytes *= m_;
    const char* bound = compute >= stream && compute >= reduce ? "compute"
                        : stream >= reduce                     ? "weight streaming"
                                                               : "gradient reduction";
    plan.metrics = {{"systems", w_.parallel.dp},
                    {"micro_batches_per_system", m_},
                    {"wafer_compute_s", compute},
                    {"weight_stream_s", stream},
                    {"grad_reduce_s", reduce},
                    {"weight_update_s", update},
                    {"streamed_weights_GB", stream_bytes / GB},
                    {"reduced_grads_GB", reduce_bytes / GB},
                    {"stream_over_compute", stream / compute}};
    plan.description = fmt::format(
        "weight streaming on {} x {} (data parallel), {} micro-batches of {} per system, recompute {}; bound "
        "by "
        "{} (per step: wafer compute {}, weight stream {}, gradient reduction {})",
        w_.parallel.dp, spec_.system_name, m_, mb_, to_string(w_.training.recompute), bound, seconds(compute),
        seconds(stream), seconds(reduce));
    plan.notes.push_back(fmt::format(
        "step bound by {}: per step the wafer computes for {}, MemoryX streams {:.4g} GB of weights to every "
        "system in {} and SwarmX reduces {:.4g} GB of gradients in {} (closed form on an idle tree; the two "
        "use "
        "opposite link directions and do not compete)",
        bound, seconds(compute), stream_bytes / GB, seconds(stream), reduce_bytes / GB, seconds(reduce)));
    plan.notes.push_back(fmt::format(
        "folded: the {} systems run identical compute, system 0 represents them; every weight broadcast and "
        "gradient reduction carries all {} systems' flows on every SwarmX edge",
        w_.parallel.dp, w_.parallel.dp));
    plan.notes.push_back(fmt::format(
        "streaming granularity is one layer: the weight stream runs {} layer(s) ahead of the compute, so in "
        "steady state a layer costs the largest of its compute, weight stream and gradient reduction; the "
        "first layer's stream at the step boundary is exposed whole (the real system starts on its first "
        "rows)",
        spec_.profile.stream_prefetch_blocks));
    if (auto note = ignored_plan_note(cw_); !note.empty()) plan.notes.push_back(note);
    plan.notes.push_back(
        "not modelled: MemoryX's cost of accumulating micro-batch gradients (assumed at line rate, as SwarmX "
        "reduces), weight sparsity, input data loading, mesh traffic inside a kernel, activation offload");
  }

  double update_seconds(double params) const {
    return params * kAdamUpdateBytesPerParam /
           (spec_.memoryx_update_bandwidth * spec_.profile.update_efficiency);
  }

  void check_fits(const MemoryBreakdown& mem) const {
    if (mem.total() > spec_.sram_bytes)
      throw InfeasibleConfig(
          MemoryShortfall{"wafer SRAM", mem.total(), spec_.sram_bytes},
          fmt::format(
              "weight streaming with micro-batch {} needs {:.1f} GiB of wafer SRAM (activations {:.1f}, "
              "stream buffers {:.1f}, runtime {:.1f}) but a {} has {:.1f} GiB; try a smaller "
              "training.micro_batch{}",
              mb_, mem.total() / GiB, mem.activations / GiB, mem.buffers / GiB, mem.framework / GiB,
              topo_.device.name, spec_.sram_bytes / GiB,
              w_.training.recompute == Recompute::full ? "" : " or training.recompute: full"));
    double store = total_params(w_.model) * kMemoryXBytesPerParam;
    if (store > spec_.memoryx_capacity_bytes)
      throw InfeasibleConfig(
          MemoryShortfall{"MemoryX", store, spec_.memoryx_capacity_bytes},
          fmt::format(
              "MemoryX needs {:.1f} TB for the weights and optimizer state ({:.0f} bytes per parameter) "
              "but holds {:.1f} TB; raise topology.memoryx.capacity_TB (MemoryX scales to 2400)",
              store / 1e12, kMemoryXBytesPerParam, spec_.memoryx_capacity_bytes / 1e12));
  }

  int cached_plan(std::map<double, int>& cache, double bytes, bool down) {
    auto it = cache.find(bytes);
    if (it != cache.end()) return it->second;
    int id = g_.add_plan(down ? network::swarm_broadcast(topo_, bytes) : network::swarm_reduce(topo_, bytes));
    cache[bytes] = id;
    return id;
  }

  void build_graph() {
    int wafer = g_.add_stream("wafer compute", 0, 0);
    int weights = g_.add_stream("weight stream (MemoryX -> SwarmX -> systems)", 0, spec_.memoryx, false);
    int grads = g_.add_stream("gradient reduction (systems -> SwarmX -> MemoryX)", 0, spec_.memoryx, false);
    int memoryx = g_.add_stream("MemoryX weight update", 0, spec_.memoryx);
    const int ahead = spec_.profile.stream_prefetch_blocks;
    const auto seq = sequence();
    std::vector<int> computes, reductions;
    std::map<int, int> last_reduction_of_block;
    for (int u = 0; u < m_; ++u) {
      for (const Position& p : seq) {
        const int at = static_cast<int>(computes.size());
        int stream_task = -1;
        if (p.stream_params > 0) {
          std::vector<int> deps;
          if (at - 1 - ahead >= 0) deps.push_back(computes[at - 1 - ahead]);  // buffer slot is free
          stream_task = g_.add_task({.kind = TaskKind::weight_stream,
                                     .stream = weights,
                                     .stage = 0,
                                     .deps = std::move(deps),
                                     .plan = cached_plan(broadcast_, p.stream_params * wb_, true),
                                     .comm_category = Category::stream,
                                     .microbatch = u});
        }
        std::vector<int> deps;
        if (stream_task >= 0) deps.push_back(stream_task);
        const int r = static_cast<int>(reductions.size());
        if (p.grad_params > 0 && r - 1 - ahead >= 0)
          deps.push_back(reductions[r - 1 - ahead]);  // backpressure
        computes.push_back(g_.add_task({.kind = p.grad_params > 0 ? TaskKind::backward : TaskKind::forward,
                                        .stream = wafer,
                                        .stage = 0,
                                        .deps = std::move(deps),
                                        .compute_seconds = p.compute,
                                        .microbatch = u}));
        if (p.grad_params > 0) {
          reductions.push_back(g_.add_task({.kind = TaskKind::dp,
                                            .stream = grads,
                                            .stage = 0,
                                            .deps = {computes.back()},
                                            .plan = cached_plan(reduce_, p.grad_params * gb_, false),
                                            .comm_category = Category::dp,
                                            .microbatch = u}));
          last_reduction_of_block[p.block] = reductions.back();
        }
      }
    }
    // After the last micro-batch: MemoryX updates each layer once its summed gradient is in, in arrival
    // order; the tied embedding (output head + input rows) last.
    const auto& m = w_.model;
    for (long long l = m.layers - 1; l >= 0; --l)
      add_update(memoryx, layer_params(m), {last_reduction_of_block.at(static_cast<int>(l))});
    const int head = static_cast<int>(m.layers);
    add_update(memoryx, head_params(m),
               {last_reduction_of_block.at(head), last_reduction_of_block.at(head + 1)});
  }

  void add_update(int stream, double params, std::vector<int> deps) {
    g_.add_compute(TaskKind::optimizer, stream, 0, update_seconds(params), Category::optimizer,
                   std::move(deps));
  }

  const topology::Topology& topo_;
  const topology::WaferClusterSpec& spec_;
  const CerebrasWorkload& cw_;
  const WorkloadConfig& w_;
  int mb_, m_ = 1;
  double wb_ = 2, gb_ = 2;
  WaferCostModel cm_;
  BlockCosts layer_, embed_, head_;
  TaskGraph g_;
  std::map<double, int> broadcast_, reduce_;
};

}  // namespace

MemoryBreakdown weight_streaming_wafer_memory(const topology::Topology& topo, const WorkloadConfig& w,
                                              int micro_batch) {
  const auto& spec = *topo.family<topology::WaferClusterSpec>();
  const auto& m = w.model;
  double e = element_bytes(w.training.precision);
  double sbh = static_cast<double>(micro_batch) * m.seq_len * m.hidden;
  MemoryBreakdown mem;
  mem.activations = m.layers * layer_activation_bytes(w, micro_batch, w.training.recompute) + sbh;
  // The layer in backward holds the rest of its activations, rebuilt by recomputation.
  mem.activations += recompute_working_bytes(w, micro_batch, w.training.recompute);
  mem.activations +=
      static_cast<double>(micro_batch) * m.seq_len * m.vocab * (e + 4 + 4);  // logits, fp32 loss
  double largest = std::max(layer_params(m), head_params(m));
  mem.buffers = spec.profile.stream_prefetch_blocks * largest * (e + w.training.grad_reduce_bytes);
  mem.framework = spec.sram_bytes * spec.profile.sram_reserved_fraction;
  return mem;
}

int largest_streaming_micro_batch(const topology::Topology& topo, const WorkloadConfig& w) {
  long long per_system = w.training.global_batch / w.parallel.dp;
  for (long long b = per_system; b >= 1; --b)
    if (per_system % b == 0 && weight_streaming_wafer_memory(topo, w, static_cast<int>(b)).total() <=
                                   topo.family<topology::WaferClusterSpec>()->sram_bytes)
      return static_cast<int>(b);
  return 0;
}

StepPlan build_weight_streaming_step(const topology::Topology& topo, const CerebrasWorkload& cw,
                                     int micro_batch) {
  return Builder(topo, cw, micro_batch).build();
}

StepPlan describe_weight_streaming_step(const topology::Topology& topo, const CerebrasWorkload& cw,
                                        int micro_batch) {
  return Builder(topo, cw, micro_batch).describe();
}

}  // namespace podsim::workload
