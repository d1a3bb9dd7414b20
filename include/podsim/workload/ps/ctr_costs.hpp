// Device time of a CTR model's dense MLP (GEMMs and element-wise kernels, forward and backward) on a GPU
// or a CPU server, from the device's calibrated compute model.
#pragma once

#include <vector>

#include "podsim/calibration/compute_model.hpp"
#include "podsim/topology/topology.hpp"
#include "podsim/workload/ps/ctr_config.hpp"
#include "podsim/workload/step_plan.hpp"

namespace podsim::workload {

// The compute model of the topology's device for a training precision.
calibration::ComputeModel device_compute_model(const topology::Topology& topo, topology::Precision precision);

struct MlpCost {
  double forward_seconds = 0, backward_seconds = 0;
  double flops = 0;  // forward + backward
  std::vector<KernelCost> kernels;
  double seconds() const { return forward_seconds + backward_seconds; }
};

// One mini-batch of `batch` examples through the MLP of layer widths `widths` (input, hidden..., output):
// per layer a forward GEMM and bias+activation, and backward the activation gradient, the data-gradient
// GEMM (down to the pooled embeddings, which the sparse update needs) and the weight-gradient GEMM.
MlpCost mlp_cost(const std::vector<int>& widths, double batch, const calibration::ComputeModel& cm);

// The dense optimizer step on one device: read and write the MLP's weights, gradients and optimizer state
// (memory bound).
double dense_update_seconds(const CtrWorkload& w, const calibration::ComputeModel& cm);

}  // namespace podsim::workload
