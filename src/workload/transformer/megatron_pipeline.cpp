// The Megatron step's pipeline: the schedule's programs assembled into tasks, the point-to-point
// transfers between stages (every data-parallel replica's flows) and the scatter/gather all-gather.
#include "megatron_step_builder.hpp"
#include "podsim/network/collective.hpp"
#include "podsim/workload/pipeline_assembly.hpp"
#include "podsim/workload/transformer/pipeline_transfer.hpp"

namespace podsim::workload::megatron {

void StepBuilder::build_pipeline() {
  PipelineCallbacks cb;
  cb.compute = [this](int s, const StageStep& step, bool final_backward) {
    add_chunk_pass(s, step, final_backward);
  };
  cb.transfer_plan = [this](int from, int to) { return transfer_plan(from, to); };
  cb.gather_plan = [this](int to) { return gather_plan(to); };
  flush_done_ = assemble_pipeline(g_, programs_, compute_stream_, cb);
}

int StepBuilder::transfer_plan(int from, int to) {
  auto key = std::make_pair(from, to);
  auto it = transfer_cache_.find(key);
  if (it != transfer_cache_.end()) return it->second;
  int id = g_.add_plan({pipeline_transfer(topo_, w_, layout_, rail_ranks_, mb_, from, to)});
  transfer_cache_[key] = id;
  return id;
}

// Scatter/gather: the receiving stage all-gathers the slices over its TP group (not with sequence
// parallelism, where the next stage consumes the sharded tensor directly).
int StepBuilder::gather_plan(int stage) {
  if (layout_.tp == 1 || !w_.parallel.scatter_gather || w_.parallel.sequence_parallel) return -1;
  auto it = gather_cache_.find(stage);
  if (it != gather_cache_.end()) return it->second;
  int id = g_.add_plan(network::plan_collective(
      topo_, network::make_collective(network::CollectiveKind::all_gather, layout_.tp_group(0, 0, stage),
                                      pipeline_activation_bytes(w_, mb_))));
  gather_cache_[stage] = id;
  return id;
}

}  // namespace podsim::workload::megatron
