#include "podsim/workload/transformer/fp8_weight_ops.hpp"

#include "podsim/workload/transformer/pipeline_split.hpp"
#include "podsim/workload/transformer/precision_bytes.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"

namespace podsim::workload {

double fp8_weight_cast_seconds(const WorkloadConfig& w, int stage, const calibration::ComputeModel& cm) {
  double per_element = quantize_bytes_per_element(w.training);
  double layers = stage_layers(w, stage);
  if (per_element <= 0 || layers <= 0) return 0;
  // QKV, attention output projection, fc1 and fc2: one cast(-transpose) kernel each.
  constexpr double kLinearsPerLayer = 4;
  // layer_params: the GEMM weights plus the norms' and biases' h-sized vectors (< 0.1% more, not cast).
  double layer_bytes = layer_params(w.model) / w.parallel.tp * per_element;
  return layers * kLinearsPerLayer * cm.memory_op(layer_bytes / kLinearsPerLayer);
}

}  // namespace podsim::workload
