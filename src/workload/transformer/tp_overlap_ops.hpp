#pragma once
// A linear layer's GEMM and its tensor-parallel collective as Transformer Engine's userbuffers run them
// (tp_overlap.hpp); internal to the transformer kind (layer_ops.cpp).
#include "podsim/workload/transformer/layer_ops.hpp"
#include "podsim/workload/transformer/tp_overlap.hpp"

namespace podsim::workload {

// The overlap in effect for one layer: null when the TP collectives are not overlapped by userbuffers.
struct Userbuffers {
  const TpOverlapGemms* gemms = nullptr;
  int tp = 1;
  explicit operator bool() const { return gemms != nullptr; }
};

// parallel.tp_overlap in effect for `w` (tp > 1 with sequence parallelism; the device check is the
// caller's: StepBuilder and the plan bound pass a workload whose tp_overlap is already off where the
// device has no userbuffers).
Userbuffers userbuffers_of(const WorkloadConfig& w);

// C[m, n] = A[m, k] B[k, n] with m the token dimension, as TE runs GEMM `g`: in chunks along m
// (ring_exchange: tp, or tp/2 aggregated; pipeline: num_splits), on the SMs the communication leaves.
OpCost ub_gemm(const calibration::ComputeModel& cm, const char* name, const Userbuffers& ub, UbGemm g,
               double m, double n, double k);

// The collective of `bytes` that GEMM `g` (of `gemm_seconds`) overlaps: an all-gather before the GEMM or a
// reduce-scatter after it (`kind`), which with g's method sets what the chunking exposes; `mlp`: it belongs
// to the MLP half (an MoE layer replaces it).
TpCollective ub_collective(network::CollectiveKind kind, double bytes, double gemm_seconds,
                           const Userbuffers& ub, UbGemm g, bool mlp);

}  // namespace podsim::workload
