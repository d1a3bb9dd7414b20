#include "podsim/plan/graph_merge.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace podsim::plan {
namespace {

int mapped(const std::vector<int>& map, int id, const char* what) {
  if (id < 0) return id;  // none (a stream on no device, a flow end that is a device)
  if (id >= static_cast<int>(map.size()) || map[static_cast<size_t>(id)] < 0)
    throw std::logic_error(fmt::format("relocate_devices: {} {} is outside the job's placement", what, id));
  return map[static_cast<size_t>(id)];
}

}  // namespace

void relocate_devices(TaskGraph& graph, const std::vector<int>& device_map,
                      const std::vector<int>& vertex_map) {
  for (auto& s : graph.streams) s.device = mapped(device_map, s.device, "device");
  for (int& d : graph.stage_devices) d = mapped(device_map, d, "device");
  for (auto& plan : graph.plans)
    for (auto& phase : plan)
      for (auto& f : phase.flows) {
        f.src = mapped(device_map, f.src, "device");
        f.dst = mapped(device_map, f.dst, "device");
        f.src_vertex = mapped(vertex_map, f.src_vertex, "switch vertex");
        f.dst_vertex = mapped(vertex_map, f.dst_vertex, "switch vertex");
      }
}

int append_graph(TaskGraph& into, const TaskGraph& part, const std::string& lane_prefix) {
  const int stream0 = static_cast<int>(into.streams.size()), task0 = static_cast<int>(into.tasks.size());
  const int plan0 = static_cast<int>(into.plans.size()), lane0 = into.stages;
  for (Stream s : part.streams) {
    if (s.stage >= 0) s.stage += lane0;
    if (s.last_task >= 0) s.last_task += task0;
    into.streams.push_back(std::move(s));
  }
  for (Task t : part.tasks) {
    if (t.stream >= 0) t.stream += stream0;
    if (t.stage >= 0) t.stage += lane0;
    if (t.peer_stage >= 0) t.peer_stage += lane0;
    if (t.plan >= 0) t.plan += plan0;
    for (int& d : t.deps) d += task0;
    into.tasks.push_back(std::move(t));
  }
  into.plans.insert(into.plans.end(), part.plans.begin(), part.plans.end());
  into.stages += part.stages;
  into.stage_devices.insert(into.stage_devices.end(), part.stage_devices.begin(), part.stage_devices.end());
  into.lane_names.resize(static_cast<size_t>(lane0));
  for (int s = 0; s < part.stages; ++s)
    into.lane_names.push_back(fmt::format("{} {}", lane_prefix,
                                          s < static_cast<int>(part.lane_names.size())
                                              ? part.lane_names[static_cast<size_t>(s)]
                                              : fmt::format("{} {}", part.lane_kind, s)));
  return task0;
}

}  // namespace podsim::plan
