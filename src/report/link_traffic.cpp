#include "podsim/report/link_traffic.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "podsim/core/csv_writer.hpp"

namespace podsim::report {

namespace {

// Bytes per link direction (link * 2 + 0 for a->b, + 1 for b->a), from every flow of every plan run.
std::vector<double> direction_bytes(const topology::Topology& topo, const plan::TaskGraph& graph) {
  std::vector<double> bytes(topo.links.size() * 2, 0.0);
  for_each_routed_hop(topo, graph, [&](size_t, int runs, const topology::Hop& hop, double b) {
    bytes[static_cast<size_t>(hop.link) * 2 + (hop.forward ? 0 : 1)] += b * runs;
  });
  return bytes;
}

double ratio(double a, double b) {
  return b > 0 ? a / b : 0.0;
}

std::vector<LinkClassTraffic> class_totals(const topology::Topology& topo, const std::vector<double>& bytes,
                                           double step) {
  std::vector<LinkClassTraffic> by_class(topology::kLinkClassNames.entries.size());
  std::vector<char> present(by_class.size(), 0);
  for (size_t l = 0; l < topo.links.size(); ++l) {
    const auto& link = topo.links[l];
    auto c = static_cast<size_t>(link.cls);
    auto& t = by_class[c];
    present[c] = 1;
    t.links += 1;
    t.capacity += 2 * link.bandwidth;
    for (size_t d = 0; d < 2; ++d) {
      double b = bytes[l * 2 + d];
      if (b <= 0) continue;
      t.bytes += b;
      t.directions_used += 1;
      t.max_link_utilization = std::max(t.max_link_utilization, ratio(b, link.bandwidth * step));
    }
  }
  std::vector<LinkClassTraffic> out;
  for (size_t c = 0; c < by_class.size(); ++c) {
    if (!present[c]) continue;
    auto t = by_class[c];
    t.cls = topology::to_string(static_cast<topology::LinkClass>(c));
    t.busy_at_line_rate_s = ratio(t.bytes, t.capacity);
    t.utilization = ratio(t.busy_at_line_rate_s, step);
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<HotLink> hottest_links(const topology::Topology& topo, const std::vector<double>& bytes,
                                   double step, size_t n) {
  std::vector<size_t> used;
  for (size_t d = 0; d < bytes.size(); ++d)
    if (bytes[d] > 0) used.push_back(d);
  auto busy = [&](size_t d) { return ratio(bytes[d], topo.links[d / 2].bandwidth); };
  auto hotter = [&](size_t x, size_t y) {
    if (busy(x) != busy(y)) return busy(x) > busy(y);
    if (bytes[x] != bytes[y]) return bytes[x] > bytes[y];
    return x < y;  // a stable, reproducible order among equals
  };
  size_t k = std::min(n, used.size());
  std::partial_sort(used.begin(), used.begin() + static_cast<long>(k), used.end(), hotter);
  std::vector<HotLink> out;
  for (size_t i = 0; i < k; ++i) {
    size_t d = used[i];
    const auto& link = topo.links[d / 2];
    int from = d % 2 == 0 ? link.a : link.b, to = d % 2 == 0 ? link.b : link.a;
    HotLink h{topo.vertices[from].name,
              topo.vertices[to].name,
              topology::to_string(link.cls),
              bytes[d],
              link.bandwidth,
              busy(d),
              ratio(busy(d), step)};
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace

const LinkClassTraffic* LinkTraffic::hottest_class() const {
  const LinkClassTraffic* best = nullptr;
  for (const auto& c : classes)
    if (c.bytes > 0 && (!best || c.utilization > best->utilization)) best = &c;
  return best;
}

std::vector<int> plan_run_counts(const plan::TaskGraph& graph) {
  std::vector<int> runs(graph.plans.size(), 0);
  for (const auto& t : graph.tasks)
    if (t.plan >= 0 && static_cast<size_t>(t.plan) < runs.size()) ++runs[static_cast<size_t>(t.plan)];
  return runs;
}

LinkTraffic link_traffic(const topology::Topology& topo, const plan::TaskGraph& graph, double step_time,
                         size_t hottest) {
  auto bytes = direction_bytes(topo, graph);
  LinkTraffic t;
  t.step_time = step_time;
  t.classes = class_totals(topo, bytes, step_time);
  t.hottest = hottest_links(topo, bytes, step_time, hottest);
  return t;
}

std::string links_csv(const LinkTraffic& t) {
  std::string out =
      csv_record({"scope", "class", "link", "links", "directions_used", "bytes", "capacity_bytes_per_s",
                  "busy_at_line_rate_s", "utilization", "max_link_utilization"});
  auto num = [](double x) { return fmt::format("{:.6g}", x); };
  for (const auto& c : t.classes)
    out += csv_record({"class", c.cls, "", std::to_string(c.links), std::to_string(c.directions_used),
                       num(c.bytes), num(c.capacity), num(c.busy_at_line_rate_s), num(c.utilization),
                       num(c.max_link_utilization)});
  for (const auto& h : t.hottest)
    out += csv_record({"link", h.cls, h.from + "->" + h.to, "1", "1", num(h.bytes), num(h.capacity),
                       num(h.busy_at_line_rate_s), num(h.utilization), num(h.utilization)});
  return out;
}

std::string links_json(const LinkTraffic& t) {
  nlohmann::ordered_json j;
  j["step_time_s"] = t.step_time;
  j["busy_time"] = "busy_at_line_rate_s: bytes / nominal bandwidth, a lower bound on busy time";
  auto& classes = j["classes"] = nlohmann::ordered_json::array();
  for (const auto& c : t.classes)
    classes.push_back({{"class", c.cls},
                       {"links", c.links},
                       {"directions_used", c.directions_used},
                       {"bytes", c.bytes},
                       {"capacity_bytes_per_s", c.capacity},
                       {"busy_at_line_rate_s", c.busy_at_line_rate_s},
                       {"utilization", c.utilization},
                       {"max_link_utilization", c.max_link_utilization}});
  auto& hot = j["hottest"] = nlohmann::ordered_json::array();
  for (const auto& h : t.hottest)
    hot.push_back({{"from", h.from},
                   {"to", h.to},
                   {"class", h.cls},
                   {"bytes", h.bytes},
                   {"capacity_bytes_per_s", h.capacity},
                   {"busy_at_line_rate_s", h.busy_at_line_rate_s},
                   {"utilization", h.utilization}});
  return j.dump();
}

std::string links_summary_line(const LinkTraffic& t) {
  const auto* c = t.hottest_class();
  if (!c) return "";
  return fmt::format(
      "  links        hottest class {}: {:.1f}% utilized on average, busiest link {:.1f}% "
      "(bytes at line rate, see links.csv)\n",
      c->cls, 100 * c->utilization, 100 * c->max_link_utilization);
}

}  // namespace podsim::report
