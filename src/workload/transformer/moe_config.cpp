#include "podsim/workload/transformer/moe_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "podsim/core/config_choice.hpp"
#include "podsim/core/config_node.hpp"
#include "podsim/topology/device_spec.hpp"
#include "podsim/workload/bounded_reads.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {
namespace {

std::string divisors(long long n) {
  std::string s;
  for (long long d = 1; d <= n; ++d)
    if (n % d == 0) s += (s.empty() ? "" : ", ") + std::to_string(d);
  return s;
}

// `capacity_factor: none` (or absent) is dropless; a number must be > 0.
double read_capacity_factor(const ConfigNode& moe) {
  if (!moe.has("capacity_factor") || moe.at("capacity_factor").as_string() == "none") return 0;
  double cf = moe.number("capacity_factor");
  if (!(cf > 0) || !std::isfinite(cf))
    moe.fail("capacity_factor",
             fmt::format("capacity_factor {} must be a number > 0 (tokens per expert as a multiple of the "
                         "mean; 1.0 drops whatever exceeds a balanced share), or none for dropless routing",
                         cf));
  return cf;
}

MoeConfig read_fields(const ConfigNode& moe, const ModelConfig& m) {
  MoeConfig c;
  c.experts = int_in(moe, "experts", 1, 1 << 20);
  c.top_k = int_in(moe, "top_k", 1, 1 << 20);
  if (c.top_k > c.experts)
    moe.fail("top_k", fmt::format("top_k {} routes each token to more experts than the {} there are; "
                                  "valid: 1..{}",
                                  c.top_k, c.experts, c.experts));
  c.ffn_hidden = moe.positive_integer_or("ffn_hidden", m.ffn_hidden);
  c.shared_experts = int_in_or(moe, "shared_experts", 0, 1 << 10, 0);
  c.shared_ffn_hidden = moe.positive_integer_or("shared_ffn_hidden", c.ffn_hidden);
  c.layer_freq = int_in_or(moe, "layer_freq", 1, 1 << 20, 1);
  c.first_dense_layers = int_in_or(moe, "first_dense_layers", 0, 1 << 20, 0);
  if (c.first_dense_layers >= m.layers)
    moe.fail("first_dense_layers", fmt::format("first_dense_layers {} leaves none of the {} layers MoE; "
                                               "valid: 0..{}",
                                               c.first_dense_layers, m.layers, m.layers - 1));
  c.router = choice_or(moe, "router", kMoeRouterNames, MoeRouter::softmax);
  c.router_groups = int_in_or(moe, "router_groups", 1, c.experts, 1);
  if (c.experts % c.router_groups)
    moe.fail("router_groups", fmt::format("router_groups {} must divide the {} experts into equal groups; "
                                          "valid: {}",
                                          c.router_groups, c.experts, divisors(c.experts)));
  c.router_group_topk = int_in_or(moe, "router_group_topk", 1, c.router_groups, c.router_groups);
  if (c.router_group_topk * (c.experts / c.router_groups) < c.top_k)
    moe.fail("router_group_topk",
             fmt::format("router_group_topk {} groups of {} experts hold fewer than top_k {} experts; valid: "
                         "{}..{}",
                         c.router_group_topk, c.experts / c.router_groups, c.top_k,
                         (c.top_k + c.experts / c.router_groups - 1) / (c.experts / c.router_groups),
                         c.router_groups));
  c.capacity_factor = read_capacity_factor(moe);
  c.imbalance = number_in_or(moe, "imbalance", 1, 1e6, 1,
                             "the busiest expert's tokens as a multiple of the mean (1 = balanced)");
  c.dispatcher = choice_or(moe, "dispatcher", kMoeDispatcherNames, MoeDispatcher::alltoall);
  c.overlap = choice_or(moe, "overlap", kMoeOverlapNames, MoeOverlap::none);
  c.probs = choice_or(moe, "probs", kMoeProbsNames, MoeProbs::activation);
  // NCCL's all-to-all and all-gather kernels hold SMs too (one per channel): unset (or auto), their share is
  // the device profile's overlap_compute_slowdown, as for every NCCL collective.
  if (moe.has("dispatcher_sms") && moe.at("dispatcher_sms").as_string() != "auto")
    c.dispatcher_sms = int_in(moe, "dispatcher_sms", 1, 1024);
  else if (c.dispatcher == MoeDispatcher::flex)
    c.dispatcher_sms = kFlexDispatcherSms;
  const char* host = "microseconds of CPU time to launch one MoE block's kernels (0 = never host-bound)";
  c.host_forward_s = number_in_or(moe, "host_forward_us", 0, 1e6, 0, host) * 1e-6;
  c.host_backward_s = number_in_or(moe, "host_backward_us", 0, 1e6, 0, host) * 1e-6;
  moe.reject_unknown_keys();
  return c;
}

// Megatron-Core folds the tp x cp x dp ranks of a pipeline stage as etp -> ep -> edp for the expert
// layers: ep x etp must divide them.
void validate_layout(const WorkloadConfig& w, const ConfigNode& root, int devices) {
  const auto& p = w.parallel;
  ConfigNode par = root.child("parallel");
  long long ranks = static_cast<long long>(p.tp) * p.cp * p.dp, folded = static_cast<long long>(p.ep) * p.etp;
  if (folded > devices)
    par.fail("ep", fmt::format("ep x etp = {} x {} = {} expert ranks, but the topology has {} devices", p.ep,
                               p.etp, folded, devices));
  if (ranks % folded)
    par.fail("ep", fmt::format("ep x etp = {} x {} = {} must divide the tp*cp*dp = {}*{}*{} = {} ranks of a "
                               "pipeline stage (Megatron-Core folds them as etp, ep, expert data parallel); "
                               "valid ep x etp: {}",
                               p.ep, p.etp, folded, p.tp, p.cp, p.dp, ranks, divisors(ranks)));
  ConfigNode moe = root.child("moe");
  if (w.moe.experts % p.ep)
    par.fail("ep", fmt::format("ep={} must divide moe.experts {} (each EP rank holds experts/ep experts); "
                               "valid: {}",
                               p.ep, w.moe.experts, divisors(w.moe.experts)));
  if (w.moe.ffn_hidden % p.etp)
    moe.fail("ffn_hidden",
             fmt::format("moe.ffn_hidden {} is not divisible by etp={}", w.moe.ffn_hidden, p.etp));
  if (w.moe.shared_experts > 0 && (w.moe.shared_ffn_hidden * w.moe.shared_experts) % p.tp)
    moe.fail("shared_ffn_hidden",
             fmt::format("the shared experts' {} x {} columns are not divisible by tp={}",
                         w.moe.shared_experts, w.moe.shared_ffn_hidden, p.tp));
  // Megatron-Core's TransformerConfig: "When using MoE with tensor parallelism, sequence parallelism must
  // be used" (the MoE layer routes the sequence-parallel shard of each TP rank).
  if (p.tp > 1 && !p.sequence_parallel)
    par.fail("sequence_parallel", fmt::format("a MoE model with tp={} needs sequence_parallel: true "
                                              "(Megatron-Core requires it: each TP rank routes its "
                                              "sequence shard)",
                                              p.tp));
}

// Megatron-Core's TransformerConfig checks for overlap_moe_expert_parallel_comm (transformer_config.py):
// expert parallelism, an all-to-all (or flex) dispatcher, no full recomputation, virtual pipeline stages
// when pipelined, at most one MTP layer.
void validate_combined_1f1b(const WorkloadConfig& w, const ConfigNode& root) {
  const auto& p = w.parallel;
  ConfigNode moe = root.child("moe");
  auto refuse = [&](const std::string& why) {
    moe.fail("overlap", "overlap: combined_1f1b (Megatron-Core's --overlap-moe-expert-parallel-comm) " + why);
  };
  if (p.ep <= 1) refuse("overlaps the expert-parallel all-to-alls: it needs parallel.ep > 1");
  if (w.moe.dispatcher == MoeDispatcher::allgather)
    refuse("runs with the alltoall or flex dispatcher, not allgather");
  if (w.training.recompute == Recompute::full)
    refuse("does not run with training.recompute: full (use selective or none)");
  if (p.pp > 1 && (p.schedule != Schedule::interleaved || (!p.virtual_stages_auto && p.virtual_stages < 2)))
    refuse(
        fmt::format("with pp={} needs the interleaved schedule with virtual_stages >= 2 (Megatron-Core "
                    "requires virtual pipeline stages when pipelined)",
                    p.pp));
  if (p.zero >= 3) refuse("is not modelled with ZeRO-3 / FSDP (parallel.zero 3) yet; use zero 0..2");
  if (w.model.mtp_layers > 1)
    refuse(fmt::format("supports at most one MTP layer (model.mtp_layers is {})", w.model.mtp_layers));
}

}  // namespace

void validate_moe_overlap(const WorkloadConfig& w, const ConfigNode& root) {
  if (w.moe.enabled() && w.moe.overlap == MoeOverlap::combined_1f1b) validate_combined_1f1b(w, root);
}

void read_expert_parallel(const ConfigNode& par, ParallelConfig& p) {
  p.ep = int_in_or(par, "ep", 1, 1 << 20, 1);
  p.etp = int_in_or(par, "etp", 1, 1 << 20, 1);
}

void read_moe_section(const ConfigNode& root, WorkloadConfig& w, int devices, int devices_per_node) {
  if (!root.has("moe")) {
    if (w.parallel.ep > 1 || w.parallel.etp > 1)
      root.child("parallel")
          .fail(w.parallel.ep > 1 ? "ep" : "etp",
                "expert parallelism needs experts: add a moe: section (moe.experts, "
                "moe.top_k) or set ep: 1 and etp: 1");
    const RecomputeModules& r = w.training.recompute_modules;
    if (r.moe_act || r.layernorm)
      root.child("training")
          .fail("recompute_modules",
                fmt::format("recompute module '{}' acts on MoE layers only (Transformer Engine fuses a dense "
                            "layer's norms into the next linear): add a moe: section or drop it",
                            r.moe_act ? "moe_act" : "layernorm"));
    return;
  }
  w.moe = read_fields(root.child("moe"), w.model);
  validate_layout(w, root, devices);
  validate_moe_overlap(w, root);
  w.moe.devices_per_node = std::max(0, devices_per_node);
}

void check_dispatcher_sms_on_device(const ConfigNode& root, const MoeConfig& moe,
                                    const topology::DeviceSpec& device) {
  if (moe.dispatcher_sms <= 0 || device.sm_count <= 0 || moe.dispatcher_sms < device.sm_count) return;
  ConfigNode node = root.child("moe");
  std::string message =
      fmt::format("the {} has {} SMs; the dispatch and combine kernels may hold 1..{} of them", device.name,
                  device.sm_count, device.sm_count - 1);
  if (node.has("dispatcher_sms")) node.fail("dispatcher_sms", message);
  node.fail("dispatcher", fmt::format("flex: its default {} SMs (moe.dispatcher_sms) are too many: {}",
                                      moe.dispatcher_sms, message));
}

}  // namespace podsim::workload
