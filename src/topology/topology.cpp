#include "podsim/topology/topology.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "podsim/core/error.hpp"

namespace podsim::topology {

const char* to_string(Precision p) {
  return kPrecisionNames.name(p);
}

Precision parse_precision(const std::string& name) {
  return kPrecisionNames.parse_or_throw(name, "precision");
}

double bytes_per_element(Precision p) {
  switch (p) {
    case Precision::fp32:
    case Precision::tf32: return 4;
    case Precision::fp16:
    case Precision::bf16: return 2;
    case Precision::fp8:
    case Precision::fp8_block:
    case Precision::mxfp8: return 1;  // block scales (1 per 32 or 128 elements) are not counted
    case Precision::nvfp4: return 0.5;
  }
  return 2;
}

double DeviceSpec::peak(Precision p) const {
  auto it = peak_flops.find(p);
  if (it == peak_flops.end())
    throw InputError(fmt::format("device {} has no peak_tflops.{} in its topology file", name, to_string(p)));
  return it->second;
}

const char* to_string(LinkClass c) {
  return kLinkClassNames.name(c);
}

LinkClass parse_link_class(const std::string& name) {
  return kLinkClassNames.parse_or_throw(name, "link class");
}

bool is_inter_node(LinkClass c) {
  return c == LinkClass::infiniband || c == LinkClass::ethernet || c == LinkClass::fabric ||
         c == LinkClass::ici;
}

int Topology::add_vertex(Vertex v) {
  vertices.push_back(std::move(v));
  return static_cast<int>(vertices.size()) - 1;
}

int Topology::add_link(int a, int b, double bandwidth, double latency, LinkClass cls) {
  links.push_back(Link{a, b, bandwidth, latency, cls, 1.0});
  return static_cast<int>(links.size()) - 1;
}

int Topology::rail_of(int device) const {
  if (rail_of_device_.empty()) return -1;
  return rail_of_device_[device];
}

std::vector<int> Topology::rail_peers(int device) const {
  std::vector<int> peers;
  if (rail_of_device_.empty()) return {device};
  int node = node_of(device), rail = rail_of(device);
  int first = node * devices_per_node;
  for (int d = first; d < first + devices_per_node && d < device_count(); ++d)
    if (rail_of_device_[d] == rail) peers.push_back(d);
  return peers;
}

std::map<std::string, int> Topology::role_counts() const {
  std::map<std::string, int> counts;
  for (const auto& v : vertices) counts[v.role]++;
  return counts;
}

}  // namespace podsim::topology
