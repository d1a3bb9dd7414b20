// Achieved bandwidth and latency of communication libraries (NCCL and the like) per link class, fitted
// from collective microbenchmarks (nccl-tests) or derived from published busbw figures.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "podsim/calibration/provenance.hpp"

namespace podsim::calibration {

// A measured collective summarized per size range (written by `podsim calibrate nccl-tests`): the
// record the fitted parameters above were derived from, and how well podsim's model reproduces it.
struct MeasuredRange {
  double from_bytes = 0, to_bytes = 0;
  double latency = 0;      // seconds: fitted time at zero size within the range (Hockney alpha)
  double busbw = 0;        // bytes/s: fitted bus bandwidth within the range (0: no size dependence seen)
  double peak_busbw = 0;   // bytes/s: largest measured busbw within the range
  std::string bound_by;    // link class ("nvlink", "infiniband", ...) or "latency"
  double model_error = 0;  // mean |relative error| of podsim's model with this profile over the range
};

struct MeasuredCollective {
  std::string op;  // all_reduce, all_gather, reduce_scatter, all_to_all, send_recv, broadcast
  int ranks = 0, nodes = 0;
  std::string bound_by;  // link class that bounds large messages
  std::string source;    // log file and line
  std::vector<MeasuredRange> ranges;
};

// One communication protocol of one collective algorithm, the way NCCL's tuning model describes it
// (NVIDIA/nccl src/graph/tuning.cc): a fixed start-up latency, a latency per algorithm step that differs
// between steps inside a server and steps that cross servers, and the fraction of link bandwidth left to
// the payload (LL sends 8 bytes of flags with every 8 bytes of data; LL128 loses 8 of every 128 bytes).
struct ProtocolCost {
  double base = 0;              // seconds, once per collective
  double intra_step = 0;        // seconds per step between two ranks of one server
  double inter_step = 0;        // seconds per step that crosses servers
  double bandwidth_factor = 1;  // payload share of the link bandwidth, (0, 1]
};

// The protocols a profile may describe, fastest start-up first (the order `auto` breaks ties in).
inline const std::vector<std::string>& protocol_names() {
  static const std::vector<std::string> names = {"ll", "ll128", "simple"};
  return names;
}
// The algorithms whose protocols a profile may describe. nvls_tree: NVLink SHARP inside each server, a tree
// across them; pat: NCCL's PAT all_gather / reduce_scatter; collnet: the scale-out switches reduce
// (InfiniBand SHARP), present only where they do.
inline const std::vector<std::string>& protocol_algorithm_names() {
  static const std::vector<std::string> names = {"ring", "tree", "nvls", "nvls_tree", "pat", "collnet"};
  return names;
}

struct FabricProfile {
  std::string name;
  std::string file;
  // Link class name ("nvlink", "infiniband", ...) -> achieved fraction of nominal bandwidth.
  std::map<std::string, double> link_efficiency;
  // Link class name -> latency of one algorithm step (one hop of a ring, one level of a tree), seconds.
  std::map<std::string, double> step_latency;
  double launch_latency = 5e-6;  // fixed cost of starting a collective
  std::vector<Provenance> provenance;
  std::vector<MeasuredCollective> measured;  // optional `collectives:` section
  // Optional `protocols:` section: algorithm ("ring", "tree") -> protocol ("ll", "ll128", "simple") ->
  // cost. Empty: collectives use launch_latency + steps x step_latency and the full link bandwidth.
  std::map<std::string, std::map<std::string, ProtocolCost>> protocols;
  // Optional `expert_dispatch:` section: link class -> achieved fraction of its nominal bandwidth when the
  // flex dispatcher's kernels (DeepEP / HybridEP, moe.dispatcher: flex) move tokens over it. They are not
  // NCCL: their own copy engines (TMA, IBGDA) on a few SMs reach other rates than NCCL's rings.
  std::map<std::string, double> expert_dispatch_efficiency;

  double efficiency(const std::string& link_class) const;
  // The flex dispatcher's fraction on that link class; link_efficiency where the profile has none.
  double dispatch_efficiency(const std::string& link_class) const;
  double step(const std::string& link_class) const;
  // Null when the profile does not describe that protocol of that algorithm.
  const ProtocolCost* protocol(const std::string& algorithm, const std::string& protocol) const;
};

FabricProfile load_fabric_profile(const std::string& path);

}  // namespace podsim::calibration
