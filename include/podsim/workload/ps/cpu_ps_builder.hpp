// The in-memory CPU parameter server (an MPI cluster; the baseline of Zhao et al., MLSys 2020) on a
// cpu_cluster: one steady-state step -> task graph.
//
// Every server is a worker and a server of 1/N of the table, which lives wholly in the servers' DRAM (no
// SSD or HBM tier). A step is `minibatches` mini-batches on every server. Each mini-batch a worker pulls
// the weights of its distinct keys from their owners (all-to-all), computes the MLP and the embedding
// gathers and gradient scatters on its cores, serves the other workers' pulls and applies the optimizer
// to the rows it owns (owner work is symmetric to worker work), pushes the row gradients and all-reduces
// the dense gradients, which may land one mini-batch late (bounded staleness, as asynchronous CPU
// parameter servers run; generous to the baseline). Pulls are prefetched one mini-batch ahead (the next
// mini-batch's keys are known from its data), so the pull of mini-batch i+1 overlaps the compute of
// mini-batch i; the step is in steady state: its first mini-batch's rows were prefetched by the previous
// step, and its last pull prefetches the next step's first mini-batch.
//
// Folding, and why it is exact: servers are symmetric, so server 0 represents all; every server's
// pull/push all-to-all and the all-reduce are on the network (beyond 49 servers the all-to-all is
// sampled by cyclic shifts, see ps_collectives.hpp: exact per server, within 1% on shared rack links).
// Consecutive mini-batches are identical and run as at most 8 tasks per stream standing for minibatches / 8
// of them.
#pragma once

#include "podsim/topology/topology.hpp"
#include "podsim/workload/ps/ctr_config.hpp"
#include "podsim/workload/step_plan.hpp"

namespace podsim::workload {

// Throws InfeasibleConfig("out_of_memory", ...) when a server's share of the table does not fit its DRAM.
StepPlan build_cpu_ps_step(const topology::Topology& topo, const CtrWorkload& w, int minibatches);
StepPlan describe_cpu_ps_step(const topology::Topology& topo, const CtrWorkload& w, int minibatches);

}  // namespace podsim::workload
