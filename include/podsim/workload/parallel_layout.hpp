// Megatron-LM's placement of ranks: tensor-parallel ranks are adjacent (inside a server), then context-
// parallel ranks, then data-parallel replicas, then pipeline stages:
//   rank = tp_rank + tp * (cp_rank + cp * (dp_rank + dp * pp_rank))
// (Megatron-Core's default order "tp-cp-ep-dp-pp", without expert parallelism), or with `pp_before_dp`
// stages before replicas, Megatron-LM's --use-tp-pp-dp-mapping ("tp-cp-ep-pp-dp") and Llama 3's
// [TP, CP, PP, DP]: rank = tp_rank + tp * (cp_rank + cp * (pp_rank + pp * dp_rank)), a model replica
// contiguous. Context-parallel ranks hold
// the same weights as their data-parallel peers, so gradients are reduced, and a distributed optimizer
// sharded, over the dp x cp ranks of a (tp_rank, pp_rank): grad_group.
// Experts (etp x ep, MoE layers) fold a stage's tp x cp x dp ranks again, as Megatron-Core's expert rank
// generator does: order "tp-ep-dp-pp" (etp fastest, then ep, then the expert data-parallel rank; a stage's
// ranks contiguous) or, with pp_before_dp, "tp-ep-pp-dp" (stages before replicas; transformer_config.cpp
// then requires pp == 1 or etp*ep == tp*cp, as Megatron-Core asserts, so an expert group stays inside one
// stage's tp x cp block of a replica).
// HSDP (parallel.shard_group with a sharded optimizer) splits each gradient group into shard groups of
// shard_dp data-parallel ranks (x cp) and all-reduces each shard across the replica groups.
#pragma once

#include <vector>

namespace podsim::workload {

struct ParallelLayout {
  int tp = 1, pp = 1, dp = 1, cp = 1;
  bool pp_before_dp = false;
  int etp = 1, ep = 1;  // expert tensor and expert parallelism (1, 1 without experts)
  int shard_dp = 0;     // data-parallel ranks per HSDP shard group; 0: the whole group shards

  int device(int tp_rank, int cp_rank, int dp_rank, int pp_rank) const {
    return tp_rank + tp * (cp_rank + cp * (pp_before_dp ? pp_rank + pp * dp_rank : dp_rank + dp * pp_rank));
  }
  std::vector<int> tp_group(int cp_rank, int dp_rank, int pp_rank) const;
  // The ranks that split each sequence, in ring order (cp_rank 0, 1, ...).
  std::vector<int> cp_group(int tp_rank, int dp_rank, int pp_rank) const;
  // Data-parallel replicas of one (tp, cp, pp) position.
  std::vector<int> dp_group(int tp_rank, int cp_rank, int pp_rank) const;
  // Every rank holding the same weight shard: all dp x cp ranks of (tp_rank, pp_rank), cp fastest.
  std::vector<int> grad_group(int tp_rank, int pp_rank) const;
  int devices() const { return tp * cp * pp * dp; }

  // Ranks of one shard group: shard_dp (the whole dp without HSDP) x cp, consecutive in grad_group.
  int shard_ranks() const { return (shard_dp > 0 ? shard_dp : dp) * cp; }
  int shard_groups() const { return dp * cp / shard_ranks(); }
  // Shard group `index` (< shard_groups()) of (tp_rank, pp_rank), and the replica group `j`
  // (< shard_ranks()): the ranks holding shard j in every shard group.
  std::vector<int> shard_group(int tp_rank, int pp_rank, int index) const;
  std::vector<int> replica_group(int tp_rank, int pp_rank, int j) const;
  // The shard group index of a device.
  int shard_index(int device) const;

  // Expert data-parallel ranks of a stage: its tp x cp x dp ranks folded by etp x ep.
  int expert_dp() const { return tp * cp * dp / (etp * ep); }
  int expert_device(int pp_rank, int etp_rank, int ep_rank, int edp_rank) const;
  // Of stage pp_rank: the expert-parallel group of an (etp, expert data-parallel) rank, the expert tensor-
  // parallel group of an (ep, edp) rank, and the expert data-parallel group of an (etp, ep) rank.
  std::vector<int> ep_group(int pp_rank, int etp_rank, int edp_rank) const;
  std::vector<int> etp_group(int pp_rank, int ep_rank, int edp_rank) const;
  std::vector<int> expert_dp_group(int pp_rank, int etp_rank, int ep_rank) const;

  // A device's coordinates, the inverse of device() and expert_device().
  struct Position {
    int tp_rank = 0, cp_rank = 0, dp_rank = 0, pp_rank = 0;
  };
  struct ExpertPosition {
    int etp_rank = 0, ep_rank = 0, edp_rank = 0;
  };
  Position position(int device) const;
  ExpertPosition expert_position(int device) const;
};

}  // namespace podsim::workload
