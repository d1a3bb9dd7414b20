// Device memory of one lane (pipeline stage, device class), by what holds it. Every workload kind fills
// one per lane of its graph; the transformer kind's model of it is in transformer/memory_model.hpp.
#pragma once

namespace podsim::workload {

struct MemoryBreakdown {
  double weights = 0, gradients = 0, optimizer = 0, activations = 0, buffers = 0, framework = 0;
  double total() const { return weights + gradients + optimizer + activations + buffers + framework; }
};

}  // namespace podsim::workload
