#include "podsim/workload/parallel_layout.hpp"

#include <cstddef>

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

std::vector<int> ParallelLayout::shard_group(int tp_rank, int pp_rank, int index) const {
  std::vector<int> all = grad_group(tp_rank, pp_rank);
  const long n = shard_ranks();
  return {all.begin() + index * n, all.begin() + (index + 1) * n};
}

std::vector<int> ParallelLayout::replica_group(int tp_rank, int pp_rank, int j) const {
  std::vector<int> all = grad_group(tp_rank, pp_rank), out;
  for (std::size_t i = static_cast<std::size_t>(j); i < all.size();
       i += static_cast<std::size_t>(shard_ranks()))
    out.push_back(all[i]);
  return out;
}

int ParallelLayout::shard_index(int device) const {
  Position at = position(device);
  return (at.dp_rank * cp + at.cp_rank) / shard_ranks();
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

ParallelLayout::Position ParallelLayout::position(int device) const {
  Position at{.tp_rank = device % tp, .cp_rank = device / tp % cp};
  int outer = device / (tp * cp);  // dp_rank + dp * pp_rank, or pp_rank + pp * dp_rank
  at.dp_rank = pp_before_dp ? outer / pp : outer % dp;
  at.pp_rank = pp_before_dp ? outer % pp : outer / dp;
  return at;
}

ParallelLayout::ExpertPosition ParallelLayout::expert_position(int device) const {
  int block = etp * ep;
  int in_block = device % block;
  int edp_rank =
      pp_before_dp ? device / block / pp : (device - this->device(0, 0, 0, position(device).pp_rank)) / block;
  return {.etp_rank = in_block % etp, .ep_rank = in_block / etp, .edp_rank = edp_rank};
}

}  // namespace podsim::workload
