// NVLink SHARP (NVLS) all_reduce as NCCL runs it inside one NVLink domain (NCCL_ALGO=NVLS; NVSwitch3 on
// Hopper, the NVLink5 switch on Blackwell). The switch reduces and multicasts: every GPU owns 1/n of the
// buffer, pulls that share reduced by the switch out of all n GPUs (multimem.ld_reduce: each GPU's port
// carries its whole buffer into the switch, the reduced share back out) and stores it once into the
// switch, which multicasts it to all n GPUs (multimem.st). Per GPU and direction that is S (1 + 1/n)
// bytes against the ring's 2 S (n-1)/n, so NVLS's busbw is 2(n-1)/(n+1) x the port bandwidth against the
// ring's 1x: flows from every GPU into its NVSwitch vertex and back, routed over the GPU's NVLink port.
// The switch's reduction rate and NCCL's fewer NVLS channels are the profile's nvls bandwidth_factor.
#include <fmt/format.h>

#include "collective_planners.hpp"
#include "podsim/core/error.hpp"
#include "podsim/topology/families.hpp"

namespace podsim::network {

using topology::Topology;

bool nvls_available(const Topology& topo, const Collective& c) {
  const auto* gpu = topo.family<topology::GpuClusterData>();
  if (!gpu || gpu->nvswitch_of_device.empty() || c.group.size() < 2) return false;
  if (!topo.fabric_profile.protocol("nvls", "simple")) return false;  // the fabric has no NVLS
  int sw = gpu->nvswitch_of(c.group.front());
  for (int d : c.group)
    if (gpu->nvswitch_of(d) != sw) return false;  // NVLS reduces inside one NVLink domain only
  return true;
}

plan::CommPlan plan_nvls(const Topology& topo, const Collective& c) {
  if (!nvls_available(topo, c))
    throw InputError(fmt::format(
        "algorithm nvls (NVLink SHARP) needs every rank on one NVLink domain of a topology whose fabric "
        "profile has `protocols: nvls:` (NVSwitch with in-switch reduction: Hopper, Blackwell); {} has {}",
        topo.name,
        topo.fabric_profile.protocol("nvls", "simple") ? "this group spread over several NVLink domains"
                                                       : "no NVLS in its fabric profile"));
  const int n = static_cast<int>(c.group.size());
  // Two steps through the switch (reduce, multicast), none across servers; only Simple exists.
  auto terms = protocol_terms(topo, "nvls", Protocol::simple, 2, 0);
  const double per_direction = c.bytes * (1.0 + 1.0 / n) * terms.byte_scale;
  const int sw = topo.family<topology::GpuClusterData>()->nvswitch_of(c.group.front());
  plan::CommPhase phase;
  for (int d : c.group) {
    phase.flows.push_back(plan::to_switch(d, sw, per_direction));
    phase.flows.push_back(plan::from_switch(sw, d, per_direction));
  }
  phase.latency = terms.latency;
  return {phase};
}

}  // namespace podsim::network
