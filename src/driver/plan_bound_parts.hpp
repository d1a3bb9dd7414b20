// What the plan bound's two files share (plan_bound.cpp: the per-candidate chains; plan_refine.cpp: the
// whole step's fabric load before a simulation). Private to src/driver.
#pragma once

#include <algorithm>
#include <vector>

#include "podsim/driver/plan_bound.hpp"
#include "podsim/network/collective.hpp"
#include "podsim/workload/transformer/data_parallel_groups.hpp"
#include "podsim/workload/transformer/moe_math.hpp"
#include "podsim/workload/transformer/moe_memory.hpp"
#include "podsim/workload/transformer/pipeline_split.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"

namespace podsim::driver {

// A small margin keeps float rounding of the merged collectives from crossing the simulation.
constexpr double kCommMargin = 0.99;

// A transformer layer's dense parameters per rank, as the bound counts them: the smaller of a dense layer's
// and a MoE layer's (attention, router, shared experts; the routed experts shard apart).
inline double dense_unit_params(const workload::WorkloadConfig& w) {
  return workload::layer_params(w.model) / w.parallel.tp +
         std::min(0.0, workload::moe_dense_delta_per_layer(w));
}

inline int microbatches(const workload::WorkloadConfig& w) {
  return static_cast<int>(w.training.global_batch /
                          (static_cast<long long>(w.parallel.dp) * w.training.micro_batch));
}

// A stage's transformer layers and MoE layers (an embedding or loss slot holds none).
inline Estimator::StageLayers stage_layers_of(const workload::WorkloadConfig& w, int stage) {
  int v = std::max(1, w.parallel.virtual_stages);
  Estimator::StageLayers out;
  for (int k = 0; k < v; ++k) {
    long long n = workload::chunk_layers(w, v, stage, k);
    long long moe = workload::moe_layers_in_chunk(w, v, stage, k);
    out.layers += static_cast<double>(n);
    out.moe += static_cast<double>(moe);
  }
  return out;
}

}  // namespace podsim::driver
