// Achieved bandwidth and latency of communication libraries (NCCL and the like) per link class, fitted
// from collective microbenchmarks (nccl-tests) or derived from published busbw figures.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "podsim/calibration/provenance.hpp"

namespace podsim::calibration {

struct FabricProfile {
  std::string name;
  std::string file;
  // Link class name ("nvlink", "infiniband", ...) -> achieved fraction of nominal bandwidth.
  std::map<std::string, double> link_efficiency;
  // Link class name -> latency of one algorithm step (one hop of a ring, one level of a tree), seconds.
  std::map<std::string, double> step_latency;
  double launch_latency = 5e-6;  // fixed cost of starting a collective
  std::vector<Provenance> provenance;

  double efficiency(const std::string& link_class) const;
  double step(const std::string& link_class) const;
};

FabricProfile load_fabric_profile(const std::string& path);

}  // namespace podsim::calibration
