// Multi-token prediction modules on the last pipeline stage (mtp_ops.hpp).
#include "podsim/workload/transformer/mtp_ops.hpp"

#include "podsim/workload/transformer/gemm_accumulation.hpp"
#include "podsim/workload/transformer/memory_model.hpp"
#include "podsim/workload/transformer/precision_bytes.hpp"

namespace podsim::workload {
namespace {

using network::CollectiveKind;

struct MtpShapes {
  double tokens, sp_h, h, t, eb;
  bool sp;
};

MtpShapes mtp_shapes(const WorkloadConfig& w, int micro_batch) {
  MtpShapes x{};
  x.tokens = static_cast<double>(micro_batch) * w.model.seq_len / w.parallel.cp;
  x.h = static_cast<double>(w.model.hidden);
  x.t = w.parallel.tp;
  x.sp = w.parallel.sequence_parallel;
  x.sp_h = (x.sp ? x.tokens / x.t : x.tokens) * x.h;  // residual-stream elements held by this rank
  x.eb = activation_bytes(w.training);
  return x;
}

// The module's own kernels before its transformer layer: embedding of the shifted tokens, enorm and hnorm,
// the concatenation, eh_proj and the all-gather of its output.
PassCost module_input_forward(const calibration::ComputeModel& cm, const MtpShapes& x) {
  PassCost p;
  p.add(memory_cost(cm, "MTP embedding lookup (shared embedding)", 2 * x.tokens * x.h * x.eb));
  p.add(memory_cost(cm, "MTP enorm and hnorm", 2 * 2 * x.sp_h * x.eb));
  p.add(memory_cost(cm, "MTP concatenation", 2 * 2 * x.sp_h * x.eb));
  p.add(gemm_cost(cm, "MTP eh_proj (2h -> h)", x.tokens, x.h / x.t, 2 * x.h));
  if (x.t > 1) {
    p.tp.push_back(
        {x.sp ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce, x.tokens * x.h * x.eb});
    if (x.sp) p.tp.push_back({CollectiveKind::all_gather, x.tokens * 2 * x.h * x.eb});
    p.tp.push_back({CollectiveKind::all_gather, x.tokens * x.h * x.eb});
  }
  return p;
}

PassCost module_input_backward(const calibration::ComputeModel& cm, const MtpShapes& x) {
  PassCost p;
  linear_backward(p, cm, "MTP eh_proj dgrad", "MTP eh_proj wgrad", x.tokens, x.h / x.t, 2 * x.h);
  p.add(memory_cost(cm, "MTP concatenation backward", 2 * 2 * x.sp_h * x.eb));
  p.add(memory_cost(cm, "MTP enorm and hnorm backward", 2 * 3 * x.sp_h * x.eb));
  p.add(memory_cost(cm, "MTP embedding backward", 2 * x.tokens * x.h * x.eb));
  if (x.t > 1) {  // the forward's collectives in reverse, the same bytes
    p.tp.push_back({CollectiveKind::all_gather, x.tokens * x.h * x.eb});
    if (x.sp) p.tp.push_back({CollectiveKind::reduce_scatter, x.tokens * 2 * x.h * x.eb});
    p.tp.push_back(
        {x.sp ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce, x.tokens * x.h * x.eb});
  }
  return p;
}

}  // namespace

void add_mtp_costs(HeadCosts& c, const WorkloadConfig& w, int micro_batch,
                   const calibration::ComputeModel& cm) {
  if (w.model.mtp_layers <= 0) return;
  MtpShapes x = mtp_shapes(w, micro_batch);
  // The main output layer's kernels, as the shared head runs them again on the module's hidden state.
  const PassCost head_forward = c.output_forward, head_backward = c.output_backward;
  LayerCosts layer = layer_costs(w, micro_batch, cm);
  PassCost input_forward = module_input_forward(gemm_model(w, cm, GemmPass::fprop), x);
  PassCost input_backward = module_input_backward(gemm_model(w, cm, GemmPass::dgrad), x);
  for (int k = 0; k < w.model.mtp_layers; ++k) {
    c.output_forward.add(input_forward);
    c.output_forward.add(layer.forward);
    c.output_forward.add(head_forward);
    c.output_backward.add(head_backward);
    c.output_backward.add(layer.recompute);
    c.output_backward.add(layer.backward);
    c.output_backward.add(input_backward);
  }
}

double mtp_activation_bytes(const WorkloadConfig& w, int micro_batch) {
  if (w.model.mtp_layers <= 0) return 0;
  MtpShapes x = mtp_shapes(w, micro_batch);
  // The working set of the layer whose backward runs is the stage's, counted once (stage_memory).
  double layer = layer_activation_bytes(w, micro_batch, w.training.recompute);
  double own = 4 * x.sp_h * x.eb;  // enorm and hnorm inputs, eh_proj input (2h)
  double logits = x.tokens * w.model.vocab / x.t * loss_bytes_per_logit(w);  // the main head's loss
  return w.model.mtp_layers * (layer + own + logits);
}

}  // namespace podsim::workload
