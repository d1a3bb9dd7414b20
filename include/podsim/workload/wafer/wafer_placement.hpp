// Layer-pipelined placement: the blocks of a model (embedding, layers, output head) laid on rectangles of
// the wafer's 2D mesh, each rectangle's area in proportion to the block's compute (so every block takes
// about as long per micro-batch and the pipeline is balanced) but never smaller than the block's memory
// needs. Rectangles fill horizontal bands in snake order (left to right, then right to left below), so
// consecutive blocks always share an edge and activations cross one boundary of mesh links.
#pragma once

#include <optional>
#include <vector>

#include "podsim/workload/wafer/wafer_kernels.hpp"

namespace podsim::workload {

struct Placement {
  std::vector<MeshRect> regions;      // one per block, in pipeline order
  std::vector<int> band;              // band of each region
  std::vector<int> boundary_links;    // mesh links between region i and region i+1 (size regions - 1)
  std::vector<double> target_cores;   // the ideal (unrounded) area of each region
  std::vector<bool> sized_by_memory;  // its memory, not its share of the compute, set its area
  int bands = 0;
};

// `work`: compute of each block (any positive unit); `min_cores`: cores each block needs for its memory.
// Returns nothing when the blocks do not fit on a `columns` x `rows` mesh.
std::optional<Placement> place_blocks(const std::vector<double>& work, const std::vector<double>& min_cores,
                                      int columns, int rows);

}  // namespace podsim::workload
