#include "podsim/plan/stage_speed.hpp"

#include <stdexcept>

namespace podsim::plan {

void slow_lanes(TaskGraph& graph, const std::vector<double>& speed) {
  for (double s : speed)
    if (!(s > 0 && s <= 1)) throw std::logic_error("slow_lanes: a lane speed outside (0, 1]");
  for (auto& t : graph.tasks)
    if (t.stage >= 0 && t.stage < static_cast<int>(speed.size())) t.compute_seconds /= speed[t.stage];
}

}  // namespace podsim::plan
