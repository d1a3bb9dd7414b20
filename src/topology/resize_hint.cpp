#include "podsim/topology/resize_hint.hpp"

namespace podsim::topology {

std::string resize_hint(const Topology& topo) {
  if (topo.kind == "torus") return "--set topology.dims=[A,B,...], a slice up to pod_dims";
  if (topo.kind == "wafer_cluster") return "--set topology.systems=N";
  return "--set topology.nodes=N";
}

std::string with_resize_hint(const std::string& message, const Topology& topo) {
  static const std::string generic = "--set topology.nodes=N";
  std::string out = message;
  std::string hint = resize_hint(topo);
  if (hint == generic) return out;
  for (size_t at = out.find(generic); at != std::string::npos; at = out.find(generic, at + hint.size()))
    out.replace(at, generic.size(), hint);
  return out;
}

}  // namespace podsim::topology
