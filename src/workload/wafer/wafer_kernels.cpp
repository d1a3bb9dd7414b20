#include "podsim/workload/wafer/wafer_kernels.hpp"

#include <algorithm>
#include <cmath>

#include "podsim/topology/wafer_cluster.hpp"

namespace podsim::workload {
namespace {

struct Builder {
  const WaferCostModel& cm;
  const MeshRect& r;
  PassCost* pass;
  void gemm(const char* name, double m, double n, double k) {
    pass->add({name, true, 2 * m * n * k, 0, cm.gemm_seconds(m, n, k, r)});
  }
  // Backward of C = A B: dA = dC B^T (m x k, reducing over n) and dB = A^T dC (k x n, reducing over m).
  void gemm_backward(const char* dgrad, const char* wgrad, double m, double n, double k) {
    gemm(dgrad, m, k, n);
    gemm(wgrad, k, n, m);
  }
  void elementwise(const char* name, double bytes) {
    pass->add({name, false, 0, bytes, cm.elementwise_seconds(bytes, r)});
  }
};

void layer_forward(const WorkloadConfig& w, Builder b, double mb, bool attention_only = false) {
  const auto& m = w.model;
  double s = m.seq_len, t = mb * s, h = m.hidden, f = m.ffn_hidden, a = m.heads,
         e = element_bytes(w.training.precision);
  if (!attention_only) {
    b.elementwise("layer norm 1", 2 * t * h * e);
    b.gemm("QKV", t, 3 * h, h);
  }
  b.gemm("attention scores QK^T", mb * a * s, s, h / a);
  b.elementwise("softmax + dropout", 2 * mb * a * s * s * e);
  b.gemm("attention over V", mb * a * s, h / a, s);
  if (attention_only) return;
  b.gemm("projection", t, h, h);
  b.elementwise("bias + dropout + residual", 3 * t * h * e);
  b.elementwise("layer norm 2", 2 * t * h * e);
  b.gemm("MLP fc1", t, f, h);
  b.elementwise("GeLU", 2 * t * f * e);
  b.gemm("MLP fc2", t, h, f);
  b.elementwise("bias + dropout + residual", 3 * t * h * e);
}

}  // namespace

WaferCostModel::WaferCostModel(const topology::Topology& topo, topology::Precision precision) : topo_(topo) {
  peak_ = topo.device.peak(precision);
  core_peak_ = topo.family<topology::WaferClusterSpec>()->mesh.core_peak(peak_);
}

MeshRect WaferCostModel::whole_mesh() const {
  const auto& mesh = topo_.family<topology::WaferClusterSpec>()->mesh;
  return {0, 0, mesh.columns, mesh.rows};
}

double WaferCostModel::gemm_seconds(double m, double n, double k, const MeshRect& r) const {
  const auto& spec = *topo_.family<topology::WaferClusterSpec>();
  auto busiest = [&](double rows, double cols) { return std::ceil(m / rows) * std::ceil(n / cols); };
  double blocks = std::min(busiest(r.rows, r.columns), busiest(r.columns, r.rows));
  double fill = (r.rows + r.columns) * spec.mesh.hop_latency;
  return 2 * k * blocks / (core_peak_ * spec.profile.gemm_efficiency) + fill + spec.profile.kernel_overhead_s;
}

double WaferCostModel::elementwise_seconds(double bytes, const MeshRect& r) const {
  const auto& spec = *topo_.family<topology::WaferClusterSpec>();
  double bandwidth =
      spec.sram_bandwidth * static_cast<double>(r.cores()) / static_cast<double>(spec.mesh.cores);
  return bytes / (bandwidth * spec.profile.sram_efficiency) + spec.profile.kernel_overhead_s;
}

BlockCosts wafer_layer_costs(const WorkloadConfig& w, int micro_batch, const WaferCostModel& cm,
                             const MeshRect& r) {
  BlockCosts c;
  const auto& m = w.model;
  double mb = micro_batch, s = m.seq_len, t = mb * s, h = m.hidden, f = m.ffn_hidden, a = m.heads;
  double e = element_bytes(w.training.precision);
  layer_forward(w, {cm, r, &c.forward}, mb);
  Builder b{cm, r, &c.backward};
  if (w.training.recompute == Recompute::full) layer_forward(w, b, mb);
  if (w.training.recompute == Recompute::selective) layer_forward(w, b, mb, true);
  b.elementwise("bias + dropout + residual backward", 3 * t * h * e);
  b.gemm_backward("MLP fc2 dgrad", "MLP fc2 wgrad", t, h, f);
  b.elementwise("GeLU backward", 3 * t * f * e);
  b.gemm_backward("MLP fc1 dgrad", "MLP fc1 wgrad", t, f, h);
  b.elementwise("layer norm 2 backward", 3 * t * h * e);
  b.elementwise("bias + dropout + residual backward", 3 * t * h * e);
  b.gemm_backward("projection dgrad", "projection wgrad", t, h, h);
  b.gemm_backward("attention over V dgrad", "attention over V grad V", mb * a * s, h / a, s);
  b.elementwise("softmax + dropout backward", 3 * mb * a * s * s * e);
  b.gemm_backward("attention scores dgrad Q", "attention scores grad K", mb * a * s, s, h / a);
  b.gemm_backward("QKV dgrad", "QKV wgrad", t, 3 * h, h);
  b.elementwise("layer norm 1 backward", 3 * t * h * e);
  return c;
}

BlockCosts wafer_embedding_costs(const WorkloadConfig& w, int micro_batch, const WaferCostModel& cm,
                                 const MeshRect& r) {
  BlockCosts c;
  double t = static_cast<double>(micro_batch) * w.model.seq_len, h = w.model.hidden;
  double e = element_bytes(w.training.precision);
  Builder{cm, r, &c.forward}.elementwise("token + position embedding", 3 * t * h * e);
  Builder{cm, r, &c.backward}.elementwise("embedding gradient scatter-add", t * h * (e + 4 + 4));
  return c;
}

BlockCosts wafer_head_costs(const WorkloadConfig& w, int micro_batch, const WaferCostModel& cm,
                            const MeshRect& r) {
  BlockCosts c;
  double t = static_cast<double>(micro_batch) * w.model.seq_len, h = w.model.hidden, v = w.model.vocab;
  double e = element_bytes(w.training.precision);
  Builder f{cm, r, &c.forward};
  f.elementwise("final layer norm", 2 * t * h * e);
  f.gemm("logits", t, v, h);
  f.elementwise("cross-entropy (fp32 softmax)", t * v * (e + 4 + 4));
  Builder b{cm, r, &c.backward};
  b.elementwise("cross-entropy backward", t * v * (4 + e));
  b.gemm_backward("logits dgrad", "logits wgrad", t, v, h);
  b.elementwise("final layer norm backward", 3 * t * h * e);
  return c;
}

}  // namespace podsim::workload
