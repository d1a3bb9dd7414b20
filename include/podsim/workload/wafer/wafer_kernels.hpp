// The kernels of a transformer on a wafer-scale engine, costed on a rectangle of its 2D core mesh.
//
// A matrix multiply C[m x n] = A[m x k] B[k x n] is output-stationary on the rectangle: each core owns a
// ceil(m / rows) x ceil(n / columns) block of C (or the transpose, whichever is faster), the k dimension
// flows through it (streamed weights, or operands passed along the mesh). Time is the busiest core's FMACs
// at the calibrated fraction of a core's peak, plus a fill latency across the rectangle: so a rectangle too
// large for the matrix leaves cores idle, exactly as wave quantization does on a GPU. Element-wise kernels
// read and write every core's local SRAM at the calibrated fraction of its bandwidth.
#pragma once

#include "podsim/topology/topology.hpp"
#include "podsim/workload/transformer/layer_ops.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {

struct MeshRect {
  int column = 0, row = 0;    // top-left core
  int columns = 0, rows = 0;  // size in cores
  long long cores() const { return static_cast<long long>(columns) * rows; }
};

class WaferCostModel {
 public:
  WaferCostModel(const topology::Topology& topo, topology::Precision precision);
  double gemm_seconds(double m, double n, double k, const MeshRect& r) const;
  double elementwise_seconds(double bytes, const MeshRect& r) const;
  MeshRect whole_mesh() const;
  double peak_flops() const { return peak_; }

 private:
  const topology::Topology& topo_;
  double peak_ = 0, core_peak_ = 0;
};

// Forward and backward (with recomputation) of one block for one micro-batch of `micro_batch` sequences.
struct BlockCosts {
  PassCost forward, backward;
};
// One transformer layer.
BlockCosts wafer_layer_costs(const WorkloadConfig& w, int micro_batch, const WaferCostModel& cm,
                             const MeshRect& r);
// Token and position embedding lookup (forward) and its gradient scatter (backward).
BlockCosts wafer_embedding_costs(const WorkloadConfig& w, int micro_batch, const WaferCostModel& cm,
                                 const MeshRect& r);
// Final layer norm, logits and the fp32 cross-entropy, forward and backward.
BlockCosts wafer_head_costs(const WorkloadConfig& w, int micro_batch, const WaferCostModel& cm,
                            const MeshRect& r);

}  // namespace podsim::workload
