#include "podsim/workload/ps/ctr_memory.hpp"

#include "podsim/workload/transformer/layer_ops.hpp"

namespace podsim::workload {

MemoryBreakdown ps_device_memory(const CtrWorkload& w, double rows, int batch, double buffers,
                                 const calibration::DeviceProfile& profile) {
  const auto& e = w.model.embedding;
  double dense = w.model.dense_params(), eb = element_bytes(w.training.precision);
  MemoryBreakdown m;
  m.weights = rows * (e.key_bytes + e.value_bytes()) + dense * eb;
  m.optimizer =
      rows * e.dimension * e.optimizer_bytes_per_value + dense * w.training.dense_optimizer_bytes_per_param;
  m.gradients = dense * eb;
  double width_sum = 0;
  for (int wd : w.model.mlp_widths()) width_sum += wd;
  m.activations = 2 * batch * width_sum * eb;
  m.buffers = buffers;
  m.framework = profile.framework_memory_bytes;
  return m;
}

}  // namespace podsim::workload
