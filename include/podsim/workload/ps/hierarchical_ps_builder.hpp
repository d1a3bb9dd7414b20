// The hierarchical GPU parameter server (Zhao et al., "Distributed Hierarchical GPU Parameter Server for
// Massive Scale Deep Learning Ads Systems", MLSys 2020) on a gpu_cluster with host DRAM and SSDs: one
// steady-state batch period -> task graph.
//
// One step is one batch period: `minibatches` mini-batches on every GPU that share one working set in
// HBM. As in the paper's pipeline (network, CPU, SSD and GPU stages, each busy with a different batch),
// four batches are in flight: the SSD stage finds the distinct keys of batch k+2 and reads the rows their
// owners miss in DRAM; the network stage pulls the rows of batch k+1 from their owners (all-to-all) and
// partitions them per GPU; the GPU stage trains batch k (host -> HBM over PCIe, the mini-batches, HBM ->
// host); the dump stage pushes the updated rows of batch k-1 to their owners (all-to-all), which merge
// them and write the rows they do not cache to SSD. A step lasts as long as its slowest stage, with the
// stages slowing each other where they share a resource (the SSD, the NIC). With `ps.pipeline: false`
// the stages run one after another.
//
// Storage tiers are device time, not network flows: SSD, host DRAM and PCIe copies are timers on streams
// of their own (a stream runs its tasks in order, so the SSD's reads for the next batch and writes for the
// previous one queue on it). They are not links because nothing else shares them with the network in this
// model and a timer costs no SimGrid activity; what they do share (the SSD between load and dump) is a
// shared stream. The network (pull/push all-to-all between servers, NVLink all-to-all within a server,
// the dense all-reduce) is flows over the topology's links, sharing them max-min fairly.
//
// Folding, and why it is exact: servers are symmetric (keys are hash-partitioned, data shards are
// samples of the same traffic), so server 0 and its GPU 0 represent all; every server's inter-server
// traffic and every GPU's all-reduce ring are on the network, but the NVLink all-to-all of other servers
// is not (it never shares a link with server 0's). Consecutive mini-batches are identical, so they run as
// at most kPsRounds tasks each standing for minibatches / kPsRounds of them (device time, bytes and software
// latencies scaled), exact while the background traffic they share links with is steady.
#pragma once

#include "podsim/topology/topology.hpp"
#include "podsim/workload/ps/ctr_config.hpp"
#include "podsim/workload/step_plan.hpp"

namespace podsim::workload {

// Throws InfeasibleConfig("out_of_memory", ...) when the working set does not fit HBM, the staging buffers
// and cache do not fit host DRAM, or a server's share of the table does not fit its SSD.
StepPlan build_hierarchical_ps_step(const topology::Topology& topo, const CtrWorkload& w, int minibatches);
// The same plan without its task graph (for candidates that do not fit).
StepPlan describe_hierarchical_ps_step(const topology::Topology& topo, const CtrWorkload& w, int minibatches);
// Throws what build_hierarchical_ps_step would throw for this setting, without building the graph.
void check_hierarchical_ps_fits(const topology::Topology& topo, const CtrWorkload& w, int minibatches);

}  // namespace podsim::workload
