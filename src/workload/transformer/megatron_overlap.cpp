// Communication that overlaps compute inside a chunk pass: context parallelism's plans (ring attention's
// KV transfers, or the all-gather variant's collectives) and the emission of a chunk pass's work as tasks.
//
// Folding: a chunk pass is one serial task for its layers (megatron_builder.hpp). Overlapped transfers
// cannot join that task (a task is compute, then comm), so each kind of overlap of one layer becomes a
// pair: a compute task on the stage's compute stream holding the compute that hides the transfer, and a
// comm task on the stage's overlap stream that starts with it; the compute stream goes on when both are
// done. The layers of a chunk are identical, and so are the cp-1 ring steps of a layer under causal load
// balancing, so the L*(cp-1) steps fold into one pair with L*(cp-1) times the bytes and L*(cp-1)/cp of
// the attention core's time: its exposed time, max(0, transfers - compute), is the sum of the per-step
// max(0, transfer - block compute) the steps would expose one by one. Only what is identical is folded:
// each overlapped TP collective keeps its own pair (it hides only behind its own GEMMs).
#include <algorithm>

#include "megatron_step_builder.hpp"
#include "podsim/network/collective.hpp"
#include "podsim/workload/transformer/context_parallel.hpp"

namespace podsim::workload::megatron {

void StepBuilder::add_context_parallel(int stage, Pass pass, double layers, ChunkWork& work) {
  if (layout_.cp == 1) return;
  std::vector<std::pair<const PassCost*, CpPass>> passes;
  if (pass == Pass::forward)
    passes = {{&layer_.forward, CpPass::forward}};
  else
    passes = {{&layer_.recompute, CpPass::recompute}, {&layer_.backward, CpPass::backward}};
  if (w_.parallel.cp_algorithm == CpAlgorithm::all_gather) {
    std::vector<TpCollective> per_layer;
    for (const auto& [cost, which] : passes)
      for (const auto& c : cp_gather_collectives(w_, mb_, which)) per_layer.push_back(c);
    work.cp_plan = cp_collective_plan(stage, per_layer, layers);
    return;
  }
  double cp = layout_.cp, steps = layers * cp_ring_steps(w_);
  for (const auto& [cost, which] : passes) {
    double bytes = cp_ring_step_bytes(w_, mb_, which);
    if (bytes <= 0 || cost->attention_seconds <= 0) continue;
    // cp equal attention blocks per layer; cp-1 of them compute while the next KV block arrives.
    double hidden = layers * cost->attention_seconds * (cp - 1) / cp;
    work.overlaps.push_back({hidden, cp_ring_plan(stage, bytes, steps), Category::cp});
    work.seconds -= hidden;
  }
}

int StepBuilder::cp_ring_plan(int stage, double bytes, double steps) {
  plan::CommPhase phase;
  double latency = 0;
  for (int replica = 0; replica < layout_.dp; ++replica)
    for (int r : rail_ranks_) {
      auto ring = layout_.cp_group(r, replica, stage);
      for (size_t i = 0; i < ring.size(); ++i) {
        int to = ring[(i + 1) % ring.size()];
        phase.flows.push_back({ring[i], to, bytes});
        latency = std::max(latency, network::step_latency(topo_, ring[i], to));
      }
    }
  phase.latency = topo_.fabric_profile.launch_latency + latency;
  return g_.add_plan(network::scaled({phase}, steps));
}

int StepBuilder::cp_collective_plan(int stage, const std::vector<TpCollective>& per_layer, double layers) {
  if (per_layer.empty()) return -1;
  std::vector<plan::CommPlan> groups;
  for (int replica = 0; replica < layout_.dp; ++replica)
    for (int r : rail_ranks_) {
      std::vector<plan::CommPlan> plans;
      auto group = layout_.cp_group(r, replica, stage);
      for (const auto& c : per_layer)
        plans.push_back(network::scaled(
            network::plan_collective(topo_, network::make_collective(c.kind, group, c.bytes)), layers));
      groups.push_back({network::serial_merge(plans)});
    }
  return g_.add_plan(network::concurrent(groups));
}

int StepBuilder::piece_plan(int plan, int pieces) {
  if (plan < 0 || pieces == 1) return plan;
  auto key = std::make_pair(plan, pieces);
  auto it = piece_cache_.find(key);
  if (it != piece_cache_.end()) return it->second;
  int id = g_.add_plan(network::scaled(g_.plans[plan], 1.0 / pieces));
  piece_cache_[key] = id;
  return id;
}

int StepBuilder::add_work(int s, const StageStep& step, const ChunkWork& work, int pieces, double seconds,
                          const std::vector<int>& deps) {
  TaskKind kind = step.pass == Pass::forward ? TaskKind::forward : TaskKind::backward;
  auto task = [&](int stream, double seconds, int plan, Category category) {
    return g_.add_task({.kind = kind,
                        .stream = stream,
                        .stage = s,
                        .compute_seconds = seconds / pieces,
                        .plan = piece_plan(plan, pieces),
                        .comm_category = category,
                        .microbatch = step.microbatch,
                        .chunk = step.chunk});
  };
  int serial =
      task(compute_stream_[s], seconds >= 0 ? seconds * pieces : work.seconds, work.plan, Category::tp);
  for (int d : deps) g_.tasks[serial].deps.push_back(d);
  if (work.cp_plan >= 0) task(compute_stream_[s], 0, work.cp_plan, Category::cp);
  if (work.ep_plan >= 0) task(compute_stream_[s], 0, work.ep_plan, Category::ep);
  for (const Overlap& o : work.overlaps) {
    int start = g_.streams[compute_stream_[s]].last_task;
    // The communication kernels beside it (NCCL p2p for ring attention, userbuffers for the TP overlap)
    // take SMs and HBM bandwidth too: the same overlap_compute_slowdown as for data-parallel traffic (the
    // flex dispatcher's kernels, which hold a known number of SMs, bring their own: Overlap::slowdown).
    task(compute_stream_[s],
         o.slowed ? overlapped_seconds(o.seconds, idle_seconds(o.plan), o.slowdown) : o.seconds, -1,
         Category::tp);
    int comm = task(overlap_stream_[s], 0, o.plan, o.category);
    g_.tasks[comm].deps.push_back(start);
    // The next kernels consume what arrived (the next KV block, the gathered activations).
    g_.add_task({.kind = TaskKind::call_done, .stream = compute_stream_[s], .stage = s, .deps = {comm}});
  }
  return serial;
}

}  // namespace podsim::workload::megatron
