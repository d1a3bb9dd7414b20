// The head layers' kernels (layer_ops.hpp head_costs: the embedding, the output layer and its loss, and
// the multi-token-prediction modules beside it); the optimizer step's is optimizer_state.hpp's.
#include "layer_shapes.hpp"
#include "podsim/workload/transformer/layer_ops.hpp"
#include "podsim/workload/transformer/mtp_ops.hpp"
#include "podsim/workload/transformer/precision_bytes.hpp"

namespace podsim::workload {

using calibration::ComputeModel;
using network::CollectiveKind;

namespace {

// The loss over this rank's vocabulary shard of `logits` elements, forward and backward.
void add_cross_entropy(HeadCosts& c, const WorkloadConfig& w, const LayerShapes& x, const ComputeModel& cm,
                       double logits) {
  bool tp = w.parallel.tp > 1;
  if (w.training.fused_cross_entropy) {
    // Transformer Engine's parallel_cross_entropy (Megatron-Core cross_entropy_fusion_impl "te";
    // transformer_engine/pytorch/triton/cross_entropy.py before TE commit 01bbe3e of July 2026): one Triton
    // kernel reads the 16-bit logits for each row's running max and sum of exponentials (online softmax),
    // the TP ranks all-gather those three floats per row, a second kernel reads the logits again and writes
    // the loss and the gradient over them; the backward scales that gradient in place by the loss's
    // per-token gradient (element_mul_kernel). Nothing in fp32 the size of the logits.
    c.output_forward.add(
        memory_cost(cm, "cross-entropy (fused: online softmax, loss and gradient)", logits * 3 * x.eb));
    if (tp) c.output_forward.tp.push_back({CollectiveKind::all_gather, x.tokens * 3 * 4 * w.parallel.tp});
    c.output_backward.add(
        memory_cost(cm, "cross-entropy backward (fused: scale the gradient)", logits * 2 * x.eb));
    return;
  }
  // Megatron-Core's vocab-parallel cross-entropy in fp32: convert, max, exp, sum, normalize (its three
  // all-reduces over TP: max, predicted logit, sum), and the backward's gradient and 16-bit copy.
  c.output_forward.add(memory_cost(cm, "cross-entropy (fp32)", logits * (x.eb + 4 + 4 + 8 + 4 + 8)));
  if (tp)
    for (int i = 0; i < 3; ++i) c.output_forward.tp.push_back({CollectiveKind::all_reduce, x.tokens * 4});
  c.output_backward.add(memory_cost(cm, "cross-entropy backward", logits * (4 + 4 + 4 + x.eb)));
}

}  // namespace

HeadCosts head_costs(const WorkloadConfig& w, int micro_batch, const ComputeModel& cm) {
  LayerShapes x = layer_shapes(w, micro_batch);
  HeadCosts c;
  double E = x.sp_tokens * x.h;
  double logits = x.tokens * x.v / x.t;  // elements of this rank's vocabulary shard
  // Embedding: vocab-parallel lookup, all-reduce (or reduce-scatter) over TP, + position, dropout.
  c.embedding_forward.add(memory_cost(cm, "embedding lookup", 2 * x.tokens * x.h * x.eb));
  // The embedding dropout: read, write and its mask (none without model.dropout: PyTorch returns the input).
  double dropout = dropout_kernel_bytes(E, x.eb, x.mask_bytes);
  if (w.model.position_embedding == PositionEmbedding::learned)
    c.embedding_forward.add(memory_cost(
        cm, x.dropout() ? "position embedding + dropout" : "position embedding", E * 3 * x.eb + dropout));
  else if (x.dropout())  // rotary positions are applied to Q and K in each layer; here only the dropout
    c.embedding_forward.add(memory_cost(cm, "embedding dropout", dropout));
  if (w.parallel.tp > 1)
    c.embedding_forward.tp.push_back(
        {w.parallel.sequence_parallel ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce,
         x.tokens * x.h * x.eb});
  c.embedding_backward.add(memory_cost(cm, "embedding backward", dropout + 2 * x.tokens * x.h * x.eb));
  if (x.accumulate_bytes_per_param > 0)
    c.embedding_backward.add(
        memory_cost(cm, "embedding gradient accumulation", x.v * x.h / x.t * x.accumulate_bytes_per_param));
  if (w.parallel.tp > 1 && w.parallel.sequence_parallel)
    c.embedding_backward.tp.push_back({CollectiveKind::all_gather, x.tokens * x.h * x.eb});

  // Output layer: final layer norm, logits against the (tied) embedding, vocab-parallel cross-entropy and
  // its backward.
  bool rms = w.model.norm == Norm::rmsnorm;
  c.output_forward.add(memory_cost(cm, rms ? "final rmsnorm" : "final layernorm", 2 * E * x.eb));
  if (w.parallel.tp > 1 && w.parallel.sequence_parallel)
    c.output_forward.tp.push_back({CollectiveKind::all_gather, x.tokens * x.h * x.eb});
  // The output layer is Megatron-Core's own tensor_parallel.ColumnParallelLinear (GPTModel.output_layer),
  // not a Transformer Engine module: its GEMMs run in bf16 whatever training.precision says (only the
  // transformer layers' TE linears are quantized); unchanged for 16-bit and wider formats.
  const ComputeModel cm16 = cm.sixteen_bit();
  c.output_forward.add(gemm_cost(cm16, "logits", x.tokens, x.v / x.t, x.h));
  add_cross_entropy(c, w, x, cm, logits);
  linear_backward(c.output_backward, cm16, "logits dgrad", "logits wgrad", x.tokens, x.v / x.t, x.h);
  c.output_backward.add(
      memory_cost(cm, rms ? "final rmsnorm backward" : "final layernorm backward", 3 * E * x.eb));
  // The output layer's weight gradient: its own (untied), or the last stage's copy of the tied embedding
  // (on the first stage's when pp = 1, summed with the embedding's own gradient above).
  bool own_output_weights = !w.model.tied_embeddings || w.parallel.pp > 1;
  if (x.accumulate_bytes_per_param > 0 && own_output_weights)
    c.output_backward.add(memory_cost(cm, "output embedding gradient accumulation",
                                      x.v * x.h / x.t * x.accumulate_bytes_per_param));
  if (w.parallel.tp > 1)
    c.output_backward.tp.push_back(
        {w.parallel.sequence_parallel ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce,
         x.tokens * x.h * x.eb});
  add_mtp_costs(c, w, micro_batch, cm);  // multi-token prediction modules beside the output layer
  return c;
}

}  // namespace podsim::workload
