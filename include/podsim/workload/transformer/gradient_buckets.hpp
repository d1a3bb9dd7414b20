// How many buckets a chunk's gradient reduction (or its parameter gather) is split into, as the step
// builder runs them and the plan's lower bound counts them.
#pragma once

#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {

// `params` parameters of `bytes_per_param` each: PyTorch DDP's buckets of parallel.dp_bucket_MB, or
// Megatron-Core's max(40M, 1M x dp x cp) parameters (dp_bucket_MB: megatron_core); 1 to 64 buckets.
// Non-decreasing in `params`.
int gradient_bucket_count(const ParallelConfig& p, double params, double bytes_per_param);

}  // namespace podsim::workload
