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

int ParallelLayout::expert_device(int pp_rank, int etp_rank, int ep_rank, int edp_rank) const {
  int block = etp_rank + etp * ep_rank;
  if (pp_before_dp) return block + etp * ep * (pp_rank + pp * edp_rank);
  return device(0, 0, 0, pp_rank) + block + etp * ep * edp_rank;
}

std::vector<int> ParallelLayout::ep_group(int pp_rank, int etp_rank, int edp_rank) const {
  std::vector<int> g;
  for (int e = 0; e < ep; ++e) g.push_back(expert_device(pp_rank, etp_rank, e, edp_rank));
  return g;
}

std::vector<int> ParallelLayout::etp_group(int pp_rank, int ep_rank, int edp_rank) const {
  std::vector<int> g;
  for (int t = 0; t < etp; ++t) g.push_back(expert_device(pp_rank, t, ep_rank, edp_rank));
  return g;
}

std::vector<int> ParallelLayout::expert_dp_group(int pp_rank, int etp_rank, int ep_rank) const {
  std::vector<int> g;
  for (int d = 0, n = expert_dp(); d < n; ++d) g.push_back(expert_device(pp_rank, etp_rank, ep_rank, d));
  return g;
}

}  // namespace podsim::workload
