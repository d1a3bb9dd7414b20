// Memory of one device that trains a CTR model as a parameter-server worker (a GPU of the hierarchical PS,
// or a CPU server of the in-memory PS, whose "device memory" is its DRAM).
#pragma once

#include "podsim/calibration/device_profile.hpp"
#include "podsim/workload/ps/ctr_config.hpp"
#include "podsim/workload/transformer/memory_model.hpp"

namespace podsim::workload {

// A device that holds `rows` embedding rows (keys, weights and optimizer state), the whole dense MLP
// (weights, gradients, optimizer state), the activations of a mini-batch of `batch` examples and
// `buffers` bytes of pulled rows and gradients.
MemoryBreakdown ps_device_memory(const CtrWorkload& w, double rows, int batch, double buffers,
                                 const calibration::DeviceProfile& profile);

}  // namespace podsim::workload
