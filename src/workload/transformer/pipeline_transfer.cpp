#include "podsim/workload/transformer/pipeline_transfer.hpp"

#include "podsim/network/collective.hpp"
#include "podsim/workload/transformer/precision_bytes.hpp"

namespace podsim::workload {

double pipeline_activation_bytes(const WorkloadConfig& w, int micro_batch) {
  return static_cast<double>(micro_batch) * w.model.seq_len / w.parallel.cp * w.model.hidden *
         activation_bytes(w.training);
}

double pipeline_transfer_flow_bytes(const WorkloadConfig& w, int micro_batch) {
  bool split = w.parallel.tp > 1 && (w.parallel.scatter_gather || w.parallel.sequence_parallel);
  double bytes = pipeline_activation_bytes(w, micro_batch);
  return split ? bytes / w.parallel.tp : bytes;
}

plan::CommPhase pipeline_transfer(const topology::Topology& topo, const WorkloadConfig& w,
                                  const ParallelLayout& layout, const std::vector<int>& tp_ranks,
                                  int micro_batch, int from, int to) {
  double bytes = pipeline_transfer_flow_bytes(w, micro_batch);
  plan::CommPhase phase;
  for (int replica = 0; replica < layout.dp; ++replica)
    for (int c = 0; c < layout.cp; ++c)
      for (int r : tp_ranks)
        phase.flows.push_back({layout.device(r, c, replica, from), layout.device(r, c, replica, to), bytes});
  phase.latency = topo.fabric_profile.launch_latency +
                  network::step_latency(topo, layout.device(0, 0, 0, from), layout.device(0, 0, 0, to));
  return phase;
}

}  // namespace podsim::workload
