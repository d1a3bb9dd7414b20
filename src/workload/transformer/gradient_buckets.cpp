#include "podsim/workload/transformer/gradient_buckets.hpp"

#include <algorithm>
#include <cmath>

namespace podsim::workload {

int gradient_bucket_count(const ParallelConfig& p, double params, double bytes_per_param) {
  double grad_ranks = static_cast<double>(p.dp) * p.cp;
  // Clamped as a double before the cast: a tiny bucket size must not overflow the count. Finer than 64
  // buckets changes nothing visible but costs simulation time.
  double wanted = p.dp_bucket_megatron_core ? std::ceil(params / std::max(40e6, 1e6 * grad_ranks))
                                            : std::ceil(params * bytes_per_param / p.dp_bucket_bytes);
  return static_cast<int>(std::clamp(wanted, 1.0, 64.0));
}

}  // namespace podsim::workload
