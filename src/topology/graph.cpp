#include "podsim/topology/graph.hpp"

#include <fmt/format.h>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/connected_components.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>
#include <limits>

#include "podsim/core/error.hpp"

namespace podsim::topology {
namespace {

using UndirectedGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS>;

UndirectedGraph undirected(const Topology& topo) {
  UndirectedGraph g(topo.vertices.size());
  for (const auto& l : topo.links) boost::add_edge(l.a, l.b, g);
  return g;
}

std::vector<int> bfs_distances(const UndirectedGraph& g, int source) {
  std::vector<int> dist(boost::num_vertices(g), -1);
  dist[source] = 0;
  std::vector<int> queue{source};
  for (size_t head = 0; head < queue.size(); ++head) {
    int u = queue[head];
    for (auto [e, end] = boost::out_edges(u, g); e != end; ++e) {
      int v = static_cast<int>(boost::target(*e, g));
      if (dist[v] < 0) dist[v] = dist[u] + 1, queue.push_back(v);
    }
  }
  return dist;
}

// Evenly spread sample of device ranks, always including the first and last.
std::vector<int> sample_devices(int count, int samples) {
  std::vector<int> out;
  if (count <= samples) {
    for (int i = 0; i < count; ++i) out.push_back(i);
    return out;
  }
  for (int i = 0; i < samples; ++i)
    out.push_back(static_cast<int>(static_cast<long long>(i) * (count - 1) / (samples - 1)));
  return out;
}

}  // namespace

int connected_components(const Topology& topo) {
  UndirectedGraph g = undirected(topo);
  std::vector<int> component(boost::num_vertices(g));
  return boost::connected_components(g, component.data());
}

std::vector<std::string> check_routes(const Topology& topo, int samples) {
  std::vector<std::string> problems;
  UndirectedGraph g = undirected(topo);
  std::vector<int> devices = sample_devices(topo.device_count(), samples);
  Route route;
  for (int s : devices) {
    std::vector<int> dist = bfs_distances(g, topo.device_vertex[s]);
    for (int d : devices) {
      if (s == d) continue;
      route.clear();
      topo.router().route(topo.device_vertex[s], topo.device_vertex[d], route);
      int at = topo.device_vertex[s];
      bool ok = true;
      for (const Hop& h : route) {
        const Link& l = topo.links.at(h.link);
        int from = h.forward ? l.a : l.b, to = h.forward ? l.b : l.a;
        if (from != at) {
          problems.push_back(
              fmt::format("route {}->{} is not contiguous at {}", s, d, topo.vertices[at].name));
          ok = false;
          break;
        }
        at = to;
      }
      if (!ok) continue;
      int want = dist[topo.device_vertex[d]];
      if (at != topo.device_vertex[d])
        problems.push_back(fmt::format("route {}->{} ends at {}", s, d, topo.vertices[at].name));
      else if (static_cast<int>(route.size()) != want)
        problems.push_back(fmt::format("route {}->{} has {} hops, shortest is {}", s, d, route.size(), want));
      if (problems.size() > 10) return problems;
    }
  }
  return problems;
}

void validate(const Topology& topo) {
  int components = connected_components(topo);
  if (components != 1)
    throw InputError(fmt::format("{}: the topology falls apart into {} disconnected pieces", topo.source_file,
                                 components));
  auto problems = check_routes(topo, 16);
  if (!problems.empty())
    throw InputError(fmt::format("{}: routing is broken: {}", topo.source_file, problems.front()));
}

Bisection bisection_bandwidth(const Topology& topo) {
  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using FlowGraph = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<boost::edge_capacity_t, double,
                      boost::property<boost::edge_residual_capacity_t, double,
                                      boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
  const int n = static_cast<int>(topo.vertices.size());
  FlowGraph g(n + 2);
  const int source = n, sink = n + 1;
  auto capacity = boost::get(boost::edge_capacity, g);
  auto reverse = boost::get(boost::edge_reverse, g);
  auto add = [&](int u, int v, double cap) {
    auto e = boost::add_edge(u, v, g).first;
    auto r = boost::add_edge(v, u, g).first;
    capacity[e] = cap;
    capacity[r] = 0;
    reverse[e] = r;
    reverse[r] = e;
  };
  for (const auto& l : topo.links) {
    add(l.a, l.b, l.bandwidth);
    add(l.b, l.a, l.bandwidth);
  }
  const int devices = topo.compute_device_count();  // service endpoints are on neither side
  const double unlimited = std::numeric_limits<double>::max() / 4;
  for (int d = 0; d < devices; ++d) {
    if (d < devices / 2)
      add(source, topo.device_vertex[d], unlimited);
    else
      add(topo.device_vertex[d], sink, unlimited);
  }
  Bisection b;
  b.bandwidth = boost::push_relabel_max_flow(g, source, sink);
  b.cut = fmt::format("devices 0-{} | {}-{}", devices / 2 - 1, devices / 2, devices - 1);
  return b;
}

int device_diameter(const Topology& topo, int max_sources) {
  UndirectedGraph g = undirected(topo);
  int diameter = 0;
  for (int s : sample_devices(topo.device_count(), max_sources)) {
    std::vector<int> dist = bfs_distances(g, topo.device_vertex[s]);
    for (int v : topo.device_vertex) diameter = std::max(diameter, dist[v]);
  }
  return diameter;
}

}  // namespace podsim::topology
