// Megatron-Core's combined 1F1B (moe.overlap: combined_1f1b, --overlap-moe-expert-parallel-comm): in the
// steady state the forward of one microbatch and the backward of another run as one step, layer by layer,
// so that each expert-parallel all-to-all of one pass runs beside the other pass's compute. Per pair of
// layers (megatron/core/models/common/model_chunk_schedule_plan.py, TransformerLayerSchedulePlan.run):
//
//   comm stream:    combine_bwd       | dispatch_fwd -> dispatch_bwd | combine_fwd
//   compute stream: pre_dispatch_fwd  | mlp_bwd -> mlp_fwd           | pre_dispatch_bwd
//
// pre_dispatch is the attention half of the layer (with the router and permute in Megatron-Core; here
// they count with the MoE block, whose kernels podsim costs as one), mlp the MoE block. Each segment lasts
// as long as the longer of its two sides. The schedule (pipeline_schedule.cpp) runs one more warmup
// forward so that every paired forward and backward are independent; the steps outside the steady state
// dispatch and combine serially as before. Not modelled: delay_wgrad_compute (the experts' weight
// gradients moved into the dispatch window: the segment already holds the whole MoE block backward), the
// router and permute on the attention side. Host time (moe.host_*): between one forward dispatch's
// device-host sync and the next layer's, the CPU launches both passes' blocks while the GPU runs the
// layer's three segments, so a paired layer lasts at least host_forward + host_backward; that floor
// replaces the one each pass has alone (moe_step.cpp).
#include <algorithm>

#include "megatron_step_builder.hpp"

namespace podsim::workload::megatron {

void StepBuilder::pair_passes(int s, int f_chunk, int b_chunk, ChunkWork& f, ChunkWork& b) {
  double lf = static_cast<double>(moe_layers_in_chunk(s, f_chunk));
  double lb = static_cast<double>(moe_layers_in_chunk(s, b_chunk));
  // Megatron-Core pairs min(layers) layers of the two chunks; the longer chunk's other MoE layers keep
  // their serial dispatch and combine.
  double n = std::min(lf, lb);
  int combine = ep_half_plan(s, n, false), dispatches = ep_half_plan(s, 2 * n, true);
  if (n <= 0 || combine < 0 || dispatches < 0) return;
  f.ep_plan = ep_plan(s, lf - n, 1);
  b.ep_plan = ep_plan(s, lb - n, 1);
  const MoeLayerCosts& m = *moe_;
  double mlp_f = m.block_forward_seconds, mlp_b = m.block_backward_seconds;
  // The attention half, less what the chunk's sliding-window layers save on average.
  auto windowed_share = [&](int chunk) {
    double layers = static_cast<double>(chunk_layers(w_, v_, s, chunk));
    return layers > 0 ? windowed_layers_in_chunk(s, chunk) / layers : 0.0;
  };
  double pre_f = m.layer.forward.seconds - mlp_f - window_.forward * windowed_share(f_chunk);
  double pre_b = m.layer.recompute.seconds + m.layer.backward.seconds - mlp_b -
                 window_.backward * windowed_share(b_chunk);
  // The paired layers' host floor is the pair's (below), not each pass's own (moe_chunk_work).
  f.seconds -= n * f.moe_host_stall;
  b.seconds -= n * b.moe_host_stall;
  // GEMM time a tensor-parallel overlap (userbuffers) already runs beside its own collectives has left the
  // serial seconds: it cannot hide the all-to-alls too, so each pass's shares shrink to what is left.
  auto share = [](double serial, double wanted) { return wanted > 0 ? std::min(1.0, serial / wanted) : 0.0; };
  double rf = share(f.seconds, n * (pre_f + mlp_f)), rb = share(b.seconds, n * (pre_b + mlp_b));
  f.seconds -= n * (pre_f + mlp_f) * rf;
  b.seconds -= n * (pre_b + mlp_b) * rb;
  // A paired layer lasts at least both passes' host time; its segments at the network's idle times hide it.
  double host = w_.moe.host_forward_s + w_.moe.host_backward_s;
  if (host > 0) {
    double one_combine = idle_seconds(combine) / n, one_dispatch = idle_seconds(dispatches) / (2 * n);
    double segments = std::max(pre_f * rf, one_combine) +
                      std::max(mlp_b * rb + mlp_f * rf, 2 * one_dispatch) + std::max(pre_b * rb, one_combine);
    b.seconds += n * host_stall(host, segments, 0);
  }
  // The three segments, after the backward's other work (the two passes share one compute stream).
  double slowdown = ep_overlap_slowdown();
  b.overlaps.push_back(
      {.seconds = n * pre_f * rf, .plan = combine, .category = Category::ep, .slowdown = slowdown});
  b.overlaps.push_back({.seconds = n * (mlp_b * rb + mlp_f * rf),
                        .plan = dispatches,
                        .category = Category::ep,
                        .slowdown = slowdown});
  b.overlaps.push_back(
      {.seconds = n * pre_b * rb, .plan = combine, .category = Category::ep, .slowdown = slowdown});
}

}  // namespace podsim::workload::megatron
