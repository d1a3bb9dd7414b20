// kind: torus — TPU pods: chips on a 2D or 3D torus of ICI links, each chip holding one or more cores
// (the devices). Layers above read the torus's shape through topo.family<TorusGeometry>() to plan collectives
// per dimension; everything else sees an ordinary Topology.
#pragma once

#include <string>
#include <vector>

#include "podsim/topology/topology.hpp"

namespace podsim::topology {

struct TorusGeometry {
  std::vector<int> dims;         // chips per dimension, x fastest: chip = x + X * (y + Y * z)
  std::vector<bool> wraparound;  // per dimension: the ring closes (false for sizes <= 2 or a mesh)
  // Twisted torus (Camara et al. 2010, used by TPU v4 slices): crossing the wraparound of dimension d
  // shifts the coordinate of dimension e by twist[d][e] (half the length of a longer dimension).
  std::vector<std::vector<int>> twist;
  bool twisted = false;
  int cores_per_chip = 1;     // devices per chip; device = chip * cores_per_chip + core
  double core_bandwidth = 0;  // bytes/s between the cores of one chip (on-chip, closed form)
  double link_bandwidth = 0;  // nominal ICI bytes/s per link per direction
  // link_towards[chip * dims.size() * 2 + 2 * d + (positive ? 0 : 1)]: the link to the neighbour in
  // that direction and whether the chip is its `a` end (-1 when the dimension has no such neighbour).
  std::vector<int> link_towards;
  std::vector<char> link_forward;
  std::vector<int> next_chip;  // the chip at the other end of link_towards[slot]

  int chips() const;
  int chip_of(int device) const { return device / cores_per_chip; }
  std::vector<int> coords(int chip) const;
  int chip_at(const std::vector<int>& coords) const;
  // The neighbour of `chip` one step along dimension d in direction dir (+1 / -1), twists applied.
  int neighbour(int chip, int d, int dir) const;
  // Appends the links of the router's path between two chips (dimension order, shortest way round each
  // ring, twists taken into account); nothing when from == to.
  void route(int from, int to, Route& out) const;
  // True when every dimension longer than one chip is a ring and the torus is not twisted: then the
  // router treats every chip alike (a path depends only on the coordinate differences).
  bool translation_symmetric() const;
};

}  // namespace podsim::topology
