// What a chunk's gradient reduction (or its parameter gather) carries and how many buckets it is split
// into, as the step builder runs them and the plan's lower bound counts them.
#pragma once

#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {

// `params` parameters of `bytes_per_param` each: PyTorch DDP's buckets of parallel.dp_bucket_MB, or
// Megatron-Core's max(40M, 1M x dp x cp) parameters (dp_bucket_MB: megatron_core); 1 to 64 buckets.
// Non-decreasing in `params`.
int gradient_bucket_count(const ParallelConfig& p, double params, double bytes_per_param);

// Per rank, the parameters chunk `chunk` of stage `stage` (of `virtual_stages` per stage) reduces in its
// data-parallel group: its layers' dense parameters (a MoE layer's attention, router and shared experts;
// the routed experts reduce in the expert data-parallel group) and chunk_head_params.
double chunk_dense_params(const WorkloadConfig& w, int virtual_stages, int stage, int chunk);
// What a stage holds beside its layers (embedding, final norm, output layer), in stage 0's first and the
// last stage's last chunk; 0 in every other chunk.
double chunk_head_params(const WorkloadConfig& w, int virtual_stages, int stage, int chunk);

}  // namespace podsim::workload
