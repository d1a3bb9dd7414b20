#include "podsim/workload/parallel_layout.hpp"

namespace podsim::workload {

std::vector<int> ParallelLayout::tp_group(int cp_rank, int dp_rank, int pp_rank) const {
  std::vector<int> g;
  for (int t = 0; t < tp; ++t) g.push_back(device(t, cp_rank, dp_rank, pp_rank));
  return g;
}

std::vector<int> ParallelLayout::cp_group(int tp_rank, int dp_rank, int pp_rank) const {
  std::vector<int> g;
  for (int c = 0; c < cp; ++c) g.push_back(device(tp_rank, c, dp_rank, pp_rank));
  return g;
}

std::vector<int> ParallelLayout::dp_group(int tp_rank, int cp_rank, int pp_rank) const {
  std::vector<int> g;
  for (int d = 0; d < dp; ++d) g.push_back(device(tp_rank, cp_rank, d, pp_rank));
  return g;
}

std::vector<int> ParallelLayout::grad_group(int tp_rank, int pp_rank) const {
  std::vector<int> g;
  for (int d = 0; d < dp; ++d)
    for (int c = 0; c < cp; ++c) g.push_back(device(tp_rank, c, d, pp_rank));
  return g;
}

}  // namespace podsim::workload
