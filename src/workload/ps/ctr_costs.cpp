#include "podsim/workload/ps/ctr_costs.hpp"

#include <fmt/format.h>

#include "podsim/workload/transformer/layer_ops.hpp"

namespace podsim::workload {

calibration::ComputeModel device_compute_model(const topology::Topology& topo,
                                               topology::Precision precision) {
  calibration::DeviceRates rates;
  rates.peak_flops = topo.device.peak(precision);
  rates.hbm_bandwidth = topo.device.hbm_bandwidth;
  rates.sm_count = topo.device.sm_count;
  rates.element_bytes = element_bytes(precision);
  return calibration::ComputeModel(topo.device_profile, rates);
}

MlpCost mlp_cost(const std::vector<int>& widths, double batch, const calibration::ComputeModel& cm) {
  MlpCost cost;
  const double eb = cm.rates().element_bytes;
  for (size_t l = 0; l + 1 < widths.size(); ++l) {
    double in = widths[l], out = widths[l + 1];
    auto fwd = cm.gemm({batch, out, in});
    double act = cm.memory_op(2 * batch * out * eb);  // bias + activation: read and write the output
    cost.forward_seconds += fwd.seconds + act;
    auto dgrad = cm.gemm({batch, in, out});
    auto wgrad = cm.gemm({in, out, batch});
    double act_grad = cm.memory_op(3 * batch * out * eb);  // gradient through the activation, bias gradient
    cost.backward_seconds += dgrad.seconds + wgrad.seconds + act_grad;
    cost.flops += fwd.flops + dgrad.flops + wgrad.flops;
    std::string layer = fmt::format("layer {} ({}x{})", l, widths[l], widths[l + 1]);
    cost.kernels.push_back({"mlp forward", layer + " GEMM", fwd.seconds, fwd.flops, 0});
    cost.kernels.push_back({"mlp forward", layer + " bias+activation", act, 0, 2 * batch * out * eb});
    cost.kernels.push_back(
        {"mlp backward", layer + " activation gradient", act_grad, 0, 3 * batch * out * eb});
    cost.kernels.push_back({"mlp backward", layer + " data-gradient GEMM", dgrad.seconds, dgrad.flops, 0});
    cost.kernels.push_back({"mlp backward", layer + " weight-gradient GEMM", wgrad.seconds, wgrad.flops, 0});
  }
  return cost;
}

double dense_update_seconds(const CtrWorkload& w, const calibration::ComputeModel& cm) {
  double dense = w.model.dense_params(), eb = element_bytes(w.training.precision);
  return cm.memory_op(2 * dense * (2 * eb + w.training.dense_optimizer_bytes_per_param));
}

}  // namespace podsim::workload
