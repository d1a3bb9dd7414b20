// The `podsim collective` use case: time one collective (or a doubling sweep of sizes) on an otherwise idle
// topology, the way nccl-tests reports it.
#pragma once

#include <string>
#include <vector>

#include "podsim/core/config_node.hpp"

namespace podsim::driver {

struct CollectiveRequest {
  std::string topology_file;
  Overrides topology_sets;
  std::string op = "all_reduce", algorithm = "ring";
  std::string protocol = "auto";         // auto, LL, LL128, Simple (like NCCL_PROTO)
  std::string bytes = "1GB", max_bytes;  // sizes: 8, 64KB (10^3), 1K / 1MiB (2^10, 2^20), 2GB
  int devices = 8;
  bool devices_given = false;  // send_recv refuses any explicit count but 2
  int per_node = 0;            // 0 = fill each node
  bool per_node_given = false;
};

struct CollectiveSize {
  double bytes = 0, seconds = 0, algbw_GBps = 0, busbw_GBps = 0;
  std::string bound_by;             // the link class of the most loaded link, or "latency"
  std::string algorithm, protocol;  // what ran at this size (auto resolved, like NCCL_DEBUG=INFO)
};

struct CollectiveTiming {
  std::string kind, algorithm;  // algorithm: what was asked, or what runs ("direct" for all_to_all, ...)
  std::string protocol;         // what was asked (auto, LL, ...); per size: CollectiveSize
  std::string topology_name;
  int ranks = 0, per_node = 0;
  std::vector<CollectiveSize> sizes;
};

// Throws InputError for options that do not make sense on the topology.
CollectiveTiming time_collective(const CollectiveRequest& request);

// "64KB" -> 64000, "1MiB" -> 1048576, and like nccl-tests' -b/-e "1G" -> 2^30 (K, M, G alone are
// binary; KB, MB, GB decimal); `flag` names the option in the error message.
double parse_bytes(const std::string& text, const std::string& flag);

}  // namespace podsim::driver
