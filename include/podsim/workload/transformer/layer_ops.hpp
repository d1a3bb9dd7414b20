// The kernels one tensor-parallel rank runs for one transformer layer and one microbatch, costed with the
// device's compute model. This is where Megatron-LM's layer structure lives: column/row-parallel GEMMs,
// the attention core, the fused element-wise kernels, and the tensor-parallel collectives between them.
#pragma once

#include <vector>

#include "podsim/calibration/compute_model.hpp"
#include "podsim/network/collective.hpp"
#include "podsim/workload/step_plan.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {

struct OpCost {
  const char* name = "";
  bool gemm = false;
  double flops = 0;
  double bytes = 0;
  double seconds = 0;
};

struct TpCollective {
  network::CollectiveKind kind = network::CollectiveKind::all_reduce;
  double bytes = 0;  // nccl-tests convention (see network/collective.hpp)
  // With parallel.tp_overlap: seconds of the GEMMs of the linear layer this collective feeds or drains,
  // which Transformer Engine's userbuffers overlap it with (0: not overlappable).
  double overlap_seconds = 0;
  // Of an overlapped collective: the share of its bytes moved with nothing to hide behind (the first or
  // last chunk) and the share of overlap_seconds the rest moves beside; below 0: the first of tp chunks,
  // (tp-1)/tp (the pipelined default). Set per method for Transformer Engine's userbuffers (tp_overlap.hpp).
  double exposed_share = -1, window_share = -1;
  // The GEMM it overlaps was already costed with the SMs the communication kernel holds (userbuffers):
  // no further overlap_compute_slowdown.
  bool sm_costed = false;
  bool mlp = false;  // belongs to the MLP (fc1 / fc2), not to the attention half
  // Launched asynchronously beside the GEMM of overlap_seconds by Transformer Engine without userbuffers
  // (an NCCL collective on its own stream): overlapped whatever parallel.tp_overlap says.
  bool async = false;
};

struct PassCost {
  std::vector<OpCost> ops;
  std::vector<TpCollective> tp;  // blocking collectives over the tensor-parallel group
  double seconds = 0;
  double flops = 0;
  // Seconds of the attention core (scores, softmax, values) in this pass: the blocks ring attention
  // overlaps its KV transfers with under context parallelism.
  double attention_seconds = 0;
  void add(OpCost op);
  void add(const PassCost& other);
};

// One kernel costed with the device's compute model: `batch` GEMMs C[m,n] = A[m,k] B[k,n], or a
// memory-bound kernel that moves `bytes`.
OpCost gemm_cost(const calibration::ComputeModel& cm, const char* name, double m, double n, double k,
                 double batch = 1);
OpCost memory_cost(const calibration::ComputeModel& cm, const char* name, double bytes);
// The two backward GEMMs of a linear layer Y[m,n] = X[m,k] W[k,n]: dX = dY W^T [m,k] (contracting n) and
// dW = X^T dY [k,n] (contracting m).
void linear_backward(PassCost& pass, const calibration::ComputeModel& cm, const char* dgrad,
                     const char* wgrad, double m, double n, double k, double batch = 1);

// Appends one entry per op of `pass` to a step's per-kernel detail (StepPlan::kernels), under `group`.
void append_kernels(std::vector<KernelCost>& kernels, const char* group, const PassCost& pass);

struct LayerCosts {
  PassCost forward;
  PassCost recompute;  // forward work redone at the start of backward (full or selective recomputation)
  PassCost backward;
};

struct HeadCosts {
  PassCost embedding_forward, embedding_backward;  // first stage
  PassCost output_forward, output_backward;        // last stage: final norm, logits, cross-entropy
};

// Costs of one layer for one microbatch of `micro_batch` sequences on one TP rank; `windowed`: a layer of
// model.sliding_window attention (its fused attention kernels skip the blocks outside the window).
LayerCosts layer_costs(const WorkloadConfig& w, int micro_batch, const calibration::ComputeModel& cm,
                       bool windowed = false);
// What a sliding-window layer (model.sliding_window) saves against a full-attention one, per pass: its
// fused attention kernels (forward, and backward with a recomputed core) skip the blocks outside the
// window, nothing else differs (a dense or a MoE layer alike). Zero without a window or with unfused
// attention, which computes every score whatever the mask. `windowed` holds the windowed layer's kernels.
struct WindowSaving {
  double forward = 0, backward = 0;  // seconds, >= 0; backward includes the recompute pass
  PassCost windowed_forward, windowed_backward;
};
WindowSaving sliding_window_saving(const WorkloadConfig& w, int micro_batch,
                                   const calibration::ComputeModel& cm, const LayerCosts& full);

// The recompute pass of recompute: selective, one layer, from training.recompute_modules
// (recompute_modules.hpp): the chosen modules' forward kernels; `dense_mlp` false for an MoE layer, whose
// MLP is the MoE block (Megatron-Core's mlp module skips it).
PassCost selective_recompute(const WorkloadConfig& w, int micro_batch, const calibration::ComputeModel& cm,
                             bool dense_mlp, bool windowed = false);
HeadCosts head_costs(const WorkloadConfig& w, int micro_batch, const calibration::ComputeModel& cm);

double element_bytes(topology::Precision p);

// What a device runs the layer kernels at under a training precision: that format's peak and operand size,
// with the fused attention in 16 bits under the fp8 formats (NeMo / Megatron-Core keep
// fp8_dot_product_attention off by default). The step builder, the plan bound and the tests cost with it.
calibration::DeviceRates device_rates(const topology::DeviceSpec& device, topology::Precision precision);

}  // namespace podsim::workload
