// Bytes per link of one simulated step (`podsim run --links` -> links.csv), per link class and for the
// hottest links. Bytes come from routing every flow of every plan the step's tasks run, times the number
// of tasks that run it: exact whatever the timing. Busy time is its lower bound at line rate (bytes /
// nominal bandwidth per direction), named as such: the engine does not report per-link busy time.
//
// What the workload folds stays folded: the step's graph carries the traffic of every replica that can
// share a link with the simulated one (architecture.md, "Fold what symmetry makes identical"), so a link
// that only folded replicas would use (another server's NVLink under tensor parallelism) shows 0 bytes
// and the class utilization counts it as idle capacity.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "podsim/plan/task_graph.hpp"
#include "podsim/topology/topology.hpp"

namespace podsim::report {

struct LinkClassTraffic {
  std::string cls;                  // topology::LinkClass name ("nvlink", "infiniband", ...)
  int links = 0;                    // full-duplex links of the class in the topology
  int directions_used = 0;          // link directions that carried bytes
  double bytes = 0;                 // summed over every link direction of the class (a flow counts per hop)
  double capacity = 0;              // bytes/s: nominal bandwidth summed over both directions of every link
  double busy_at_line_rate_s = 0;   // bytes / capacity: mean per-direction busy time, a lower bound
  double utilization = 0;           // bytes / (capacity x step time)
  double max_link_utilization = 0;  // of the class's busiest direction
};

struct HotLink {
  std::string from, to;  // vertex names, in the direction the bytes moved
  std::string cls;
  double bytes = 0;
  double capacity = 0;             // nominal bytes/s of this direction
  double busy_at_line_rate_s = 0;  // bytes / capacity
  double utilization = 0;          // bytes / (capacity x step time)
};

struct LinkTraffic {
  double step_time = 0;
  std::vector<LinkClassTraffic> classes;  // in LinkClass order, classes the topology has
  std::vector<HotLink> hottest;           // by utilization, then bytes; at most the N asked for
  // The class with the highest utilization (nullptr when no link carried bytes).
  const LinkClassTraffic* hottest_class() const;
};

// How many tasks of `graph` run each of its plans (index: TaskGraph::plans).
std::vector<int> plan_run_counts(const plan::TaskGraph& graph);

// Calls visit(plan index, tasks running that plan, hop, bytes) for every hop of every flow of every plan
// that runs. A phase's flows between the same two vertices are routed once (routing dominates at 16k
// devices), flows ended by topology vertex as the engine routes them.
template <class Visit>
void for_each_routed_hop(const topology::Topology& topo, const plan::TaskGraph& graph, Visit&& visit) {
  std::vector<int> runs = plan_run_counts(graph);
  std::unordered_map<long long, double> pairs;
  topology::Route route;
  const long long vertices = static_cast<long long>(topo.vertices.size());
  for (size_t p = 0; p < graph.plans.size(); ++p) {
    if (runs[p] == 0) continue;
    for (const auto& phase : graph.plans[p]) {
      pairs.clear();
      for (const auto& f : phase.flows) {
        if (plan::moves_nothing(f)) continue;
        pairs[plan::source_vertex(topo, f) * vertices + plan::target_vertex(topo, f)] += f.bytes;
      }
      for (const auto& [pair, b] : pairs) {
        route.clear();
        topo.router().route(static_cast<int>(pair / vertices), static_cast<int>(pair % vertices), route);
        for (const auto& hop : route) visit(p, runs[p], hop, b);
      }
    }
  }
}

// The step's traffic on every link. `hottest` bounds the hot-link list.
LinkTraffic link_traffic(const topology::Topology& topo, const plan::TaskGraph& graph, double step_time,
                         size_t hottest = 20);

// links.csv: one row per class (scope "class") then one per hot link (scope "link").
std::string links_csv(const LinkTraffic& t);
// The same as a JSON object text (result.json's "links").
std::string links_json(const LinkTraffic& t);
// One line for the terminal summary ("" without traffic).
std::string links_summary_line(const LinkTraffic& t);

}  // namespace podsim::report
