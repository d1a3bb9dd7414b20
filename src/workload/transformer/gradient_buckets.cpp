#include "podsim/workload/transformer/gradient_buckets.hpp"

#include <algorithm>
#include <cmath>

#include "podsim/workload/transformer/memory_model.hpp"
#include "podsim/workload/transformer/moe_math.hpp"
#include "podsim/workload/transformer/moe_memory.hpp"
#include "podsim/workload/transformer/pipeline_split.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"

namespace podsim::workload {

int gradient_bucket_count(const ParallelConfig& p, double params, double bytes_per_param) {
  double grad_ranks = static_cast<double>(p.dp) * p.cp;
  // Clamped as a double before the cast: a tiny bucket size must not overflow the count. Finer than 64
  // buckets changes nothing visible but costs simulation time.
  double wanted = p.dp_bucket_megatron_core ? std::ceil(params / std::max(40e6, 1e6 * grad_ranks))
                                            : std::ceil(params * bytes_per_param / p.dp_bucket_bytes);
  return static_cast<int>(std::clamp(wanted, 1.0, 64.0));
}

double chunk_head_params(const WorkloadConfig& w, int virtual_stages, int stage, int chunk) {
  if (!((stage == 0 && chunk == 0) || (stage == w.parallel.pp - 1 && chunk == virtual_stages - 1))) return 0;
  return stage_params(w, stage) - stage_layers(w, stage) * layer_params(w.model) / w.parallel.tp -
         moe_stage_params_delta(w, stage);
}

double chunk_dense_params(const WorkloadConfig& w, int virtual_stages, int stage, int chunk) {
  long long layers = chunk_layers(w, virtual_stages, stage, chunk);
  long long moe = moe_layers_in_chunk(w, virtual_stages, stage, chunk);
  return static_cast<double>(layers) * layer_params(w.model) / w.parallel.tp +
         static_cast<double>(moe) * moe_dense_delta_per_layer(w) +
         chunk_head_params(w, virtual_stages, stage, chunk);
}

}  // namespace podsim::workload
