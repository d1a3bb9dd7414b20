#include "podsim/workload/transformer/moe_math.hpp"

#include <algorithm>
#include <cmath>

#include "podsim/workload/transformer/pipeline_split.hpp"
#include "podsim/workload/transformer/recompute_modules.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"

namespace podsim::workload {
namespace {

double matrices(const ModelConfig& m) {
  return m.mlp == Mlp::swiglu ? 3 : 2;
}

// Weights a token multiplies through in the MoE MLP minus those of the dense MLP it replaces.
double gemm_weights_delta(const WorkloadConfig& w, bool with_router) {
  const auto& m = w.model;
  const auto& e = w.moe;
  double h = m.hidden;
  double routed = e.top_k * matrices(m) * h * e.ffn_hidden;
  double shared = e.shared_experts * matrices(m) * h * e.shared_ffn_hidden;
  double router = with_router ? h * e.experts : 0;
  return routed + shared + router - matrices(m) * h * m.ffn_hidden;
}

}  // namespace

bool is_moe_layer(const WorkloadConfig& w, long long layer) {
  if (!w.moe.enabled() || layer < w.moe.first_dense_layers) return false;
  return layer % w.moe.layer_freq == 0;
}

long long moe_layers_in(const WorkloadConfig& w, long long first, long long count) {
  // The multiples of layer_freq in [max(first, first_dense_layers), first + count): counted in closed form,
  // since the plan search asks for every chunk of every candidate.
  if (!w.moe.enabled()) return 0;
  long long lo = std::max({first, w.moe.first_dense_layers, 0LL}), hi = first + count;
  if (lo >= hi) return 0;
  long long f = std::max(1LL, w.moe.layer_freq);
  auto multiples_below = [f](long long x) { return (x + f - 1) / f; };  // multiples of f in [0, x)
  return multiples_below(hi) - multiples_below(lo);
}

long long moe_layers_in_chunk(const WorkloadConfig& w, int virtual_stages, int stage, int chunk) {
  if (!w.moe.enabled()) return 0;
  return moe_layers_in(w, chunk_first_layer(w, virtual_stages, stage, chunk),
                       chunk_layers(w, virtual_stages, stage, chunk));
}

long long moe_layer_count(const WorkloadConfig& w) {
  return moe_layers_in(w, 0, w.model.layers);
}

double mlp_params(const ModelConfig& m, double f) {
  double h = m.hidden;
  double biases = m.linear_bias ? (matrices(m) - 1) * f + h : 0;  // fc1 (2f wide for SwiGLU), fc2
  return matrices(m) * h * f + biases;
}

double routed_expert_params(const WorkloadConfig& w) {
  return mlp_params(w.model, static_cast<double>(w.moe.ffn_hidden));
}

double shared_expert_params(const WorkloadConfig& w) {
  return w.moe.shared_experts * mlp_params(w.model, static_cast<double>(w.moe.shared_ffn_hidden));
}

double router_params(const WorkloadConfig& w) {
  double e = w.moe.experts;
  // DeepSeek-V3's aux-loss-free balancing adds one bias per expert to the sigmoid scores; GPT-OSS's
  // router has a bias (linear_bias).
  bool bias = w.moe.router == MoeRouter::sigmoid || w.model.linear_bias;
  return w.model.hidden * e + (bias ? e : 0);
}

double moe_total_params(const WorkloadConfig& w) {
  double dense = total_params(w.model);
  if (!w.moe.enabled()) return dense;
  double moe_mlp = router_params(w) + w.moe.experts * routed_expert_params(w) + shared_expert_params(w);
  double delta = moe_mlp - mlp_params(w.model, static_cast<double>(w.model.ffn_hidden));
  return dense + moe_layer_count(w) * delta;
}

double moe_active_params(const WorkloadConfig& w) {
  double dense = total_params(w.model);
  if (!w.moe.enabled()) return dense;
  double moe_mlp = router_params(w) + w.moe.top_k * routed_expert_params(w) + shared_expert_params(w);
  double delta = moe_mlp - mlp_params(w.model, static_cast<double>(w.model.ffn_hidden));
  return dense + moe_layer_count(w) * delta;
}

double ep_group_nodes(const WorkloadConfig& w) {
  // The EP group's ranks stride by etp (Megatron-Core's etp -> ep -> edp fold): devices_per_node / etp of
  // them share a node.
  int per_node = w.moe.devices_per_node / std::max(1, w.parallel.etp);
  int g = w.moe.devices_per_node > 0 ? std::clamp(per_node, 1, w.parallel.ep) : w.parallel.ep;
  return std::max(1.0, static_cast<double>(w.parallel.ep) / g);
}

namespace {

// P(none of `held` experts among `top_k` drawn without repetition from `pool`).
double missed(double pool, double held, long long top_k) {
  double miss = 1;
  for (long long i = 0; i < top_k; ++i) miss *= std::max(0.0, (pool - held - i) / (pool - i));
  return miss;
}

double choose(double n, double r) {
  if (r < 0 || r > n) return 0;
  double c = 1;
  for (int i = 1; i <= r; ++i) c *= (n - r + i) / i;
  return c;
}

}  // namespace

double routed_to_any_of(const WorkloadConfig& w, double held) {
  const MoeConfig& m = w.moe;
  double e = static_cast<double>(m.experts);
  double groups = static_cast<double>(m.router_groups), chosen = static_cast<double>(m.router_group_topk);
  if (groups <= 1 || chosen >= groups) return 1 - missed(e, held, m.top_k);
  // Group-limited routing under balanced (random) scores: a token's groups are a uniform choice of `chosen`
  // of them, its experts a uniform choice among theirs. The held experts (a rank's or a node's, contiguous
  // like the groups) fill whole groups, or lie in one.
  double per_group = e / groups, spans = std::max(1.0, std::ceil(held / per_group)), in_each = held / spans;
  double miss = 0;
  for (double j = 0; j <= std::min(spans, chosen); ++j)
    miss += choose(spans, j) * choose(groups - spans, chosen - j) / choose(groups, chosen) *
            missed(chosen * per_group, j * in_each, m.top_k);
  return 1 - miss;
}

double flex_distinct_nodes(const WorkloadConfig& w) {
  double nodes = ep_group_nodes(w);
  if (nodes <= 1) return 1;
  return nodes * routed_to_any_of(w, w.moe.experts / nodes);
}

double busiest_expert_load(const MoeConfig& moe) {
  return moe.dropless() ? moe.imbalance : std::min(moe.imbalance, moe.capacity_factor);
}

double dropped_fraction(const MoeConfig& moe) {
  if (moe.dropless() || moe.imbalance <= moe.capacity_factor || moe.experts == 0) return 0;
  // One expert at imbalance x the mean, the rest sharing what is left: only the busiest exceeds the
  // capacity (the others are below the mean).
  return (moe.imbalance - moe.capacity_factor) / static_cast<double>(moe.experts);
}

double moe_layer_flops_delta(const WorkloadConfig& w, double sequences, bool with_router) {
  if (!w.moe.enabled()) return 0;
  double tokens = sequences * w.model.seq_len;
  return 2 * tokens * gemm_weights_delta(w, with_router);
}

double moe_model_flops(const WorkloadConfig& w, double global_batch) {
  return model_flops(w.model, global_batch) +
         3 * moe_layer_count(w) * moe_layer_flops_delta(w, global_batch, false);
}

double moe_model_flops_causal(const WorkloadConfig& w, double global_batch) {
  return model_flops_causal(w.model, global_batch) +
         3 * moe_layer_count(w) * moe_layer_flops_delta(w, global_batch, false);
}

double moe_hardware_flops(const WorkloadConfig& w, double global_batch) {
  const auto& t = w.training;
  double flops = hardware_flops(w.model, global_batch, t.recompute, t.attention);
  flops += selective_recompute_flops_delta(w, global_batch, moe_layer_count(w));  // recompute_modules
  double passes = t.recompute == Recompute::full ? 4 : 3;  // the recomputed forward runs the experts too
  // Dropped token copies skip the expert GEMMs (the router and shared experts still see every token).
  return flops + passes * moe_layer_count(w) * moe_layer_flops_delta(w, global_batch, true);
}

}  // namespace podsim::workload
