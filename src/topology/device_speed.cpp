#include "podsim/topology/device_speed.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "podsim/core/config_node.hpp"

namespace podsim::topology {
namespace {

double read_factor(const ConfigNode& node) {
  double f = node.number("factor");
  if (!(f > 0 && f <= 1))
    node.fail("factor", fmt::format("factor {} is a device's speed relative to nominal: a number in (0, 1] "
                                    "(0.9 = every kernel takes 1/0.9 as long)",
                                    f));
  return f;
}

void slow_down(DeviceSpeed& s, int device, double f) {
  s.factor[static_cast<size_t>(device)] *= f;
}

void read_slowdown_list(const ConfigNode& root, DeviceSpeed& s, int devices, int per_node) {
  for (const auto& e : root.list("slowdown")) {
    double f = read_factor(e);
    bool by_node = e.has("node"), by_device = e.has("device");
    if (by_node == by_device) e.fail("", "each slowdown entry names exactly one of node: N or device: N");
    if (by_node) {
      int nodes = devices / std::max(1, per_node);
      int n = static_cast<int>(e.integer_in("node", 0, std::max(0, nodes - 1)));
      for (int d = n * per_node; d < (n + 1) * per_node; ++d) slow_down(s, d, f);
      s.entries.push_back(
          fmt::format("node {} (devices {}-{}) at {:.3g}x", n, n * per_node, (n + 1) * per_node - 1, f));
    } else {
      int d = static_cast<int>(e.integer_in("device", 0, devices - 1));
      slow_down(s, d, f);
      s.entries.push_back(fmt::format("device {} at {:.3g}x", d, f));
    }
    e.reject_unknown_keys();
  }
}

// Draws round(fraction x devices) distinct devices (at least one) by a partial Fisher-Yates shuffle driven
// by mt19937_64, whose output the C++ standard fixes: the same seed picks the same devices everywhere.
void read_straggler_draw(const ConfigNode& root, DeviceSpeed& s, int devices) {
  ConfigNode st = root.child("straggler");
  double fraction = st.fraction_or("fraction", 0.01);
  double f = read_factor(st);
  auto seed = static_cast<unsigned long long>(st.integer_in_or("seed", 0, 1LL << 62, 1));
  st.reject_unknown_keys();
  int count = std::max(1, static_cast<int>(std::lround(fraction * devices)));
  std::vector<int> order(static_cast<size_t>(devices));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < count; ++i) {
    auto j =
        static_cast<size_t>(i) + static_cast<size_t>(rng() % static_cast<unsigned long long>(devices - i));
    std::swap(order[static_cast<size_t>(i)], order[j]);
    slow_down(s, order[static_cast<size_t>(i)], f);
  }
  s.entries.push_back(fmt::format("{} of {} devices ({:.3g}%) at {:.3g}x, drawn with seed {}", count, devices,
                                  100.0 * count / devices, f, seed));
}

}  // namespace

int DeviceSpeed::slow_devices() const {
  return static_cast<int>(std::count_if(factor.begin(), factor.end(), [](double f) { return f < 1; }));
}

DeviceSpeed read_device_speed(const ConfigNode& root, int compute_devices, int devices_per_node) {
  DeviceSpeed s;
  if (!root.has("slowdown") && !root.has("straggler")) return s;
  s.factor.assign(static_cast<size_t>(compute_devices), 1.0);
  if (root.has("slowdown")) read_slowdown_list(root, s, compute_devices, devices_per_node);
  if (root.has("straggler")) read_straggler_draw(root, s, compute_devices);
  return s;
}

}  // namespace podsim::topology
