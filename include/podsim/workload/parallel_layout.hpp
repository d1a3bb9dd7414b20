// Megatron-LM's placement of ranks: tensor-parallel ranks are adjacent (inside a server), then data-
// parallel replicas, then pipeline stages: rank = tp_rank + tp * (dp_rank + dp * pp_rank).
#pragma once

#include <vector>

namespace podsim::workload {

struct ParallelLayout {
  int tp = 1, pp = 1, dp = 1;

  int device(int tp_rank, int dp_rank, int pp_rank) const { return tp_rank + tp * (dp_rank + dp * pp_rank); }
  std::vector<int> tp_group(int dp_rank, int pp_rank) const;
  std::vector<int> dp_group(int tp_rank, int pp_rank) const;
  int devices() const { return tp * pp * dp; }
};

}  // namespace podsim::workload
