// training.recompute_modules (recompute_modules.hpp).
#include "podsim/workload/transformer/recompute_modules.hpp"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "podsim/workload/transformer/mla_math.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"

namespace podsim::workload {
namespace {

// Megatron-Core's choices (TransformerConfig.recompute_modules docstring).
const std::vector<std::string> kMegatronModules = {"core_attn", "moe_act", "layernorm",     "mla_up_proj",
                                                   "mlp",       "moe",     "shared_experts"};
const std::vector<std::string> kModelled = {"core_attn", "mla_up_proj", "mlp", "moe_act", "layernorm"};

bool contains(const std::vector<std::string>& v, const std::string& s) {
  for (const auto& e : v)
    if (e == s) return true;
  return false;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& e : v) out += (out.empty() ? "" : ", ") + e;
  return out;
}

void set_module(RecomputeModules& r, const std::string& name) {
  if (name == "core_attn") r.core_attn = true;
  if (name == "mla_up_proj") r.mla_up_proj = true;
  if (name == "mlp") r.mlp = true;
  if (name == "moe_act") r.moe_act = true;
  if (name == "layernorm") r.layernorm = true;
}

}  // namespace

RecomputeModules read_recompute_modules(const ConfigNode& train, Recompute recompute, const ModelConfig& m,
                                        const ParallelConfig& p, std::vector<std::string>& warnings) {
  RecomputeModules r;
  if (!train.has("recompute_modules")) return r;
  auto set_by_flag = [&](const char* key) { return train.where(key).rfind("--set", 0) == 0; };
  if (recompute != Recompute::selective && set_by_flag("recompute") && !set_by_flag("recompute_modules")) {
    // --set training.recompute=full on a file that recomputes selected modules: the list says what its
    // selective recomputed, and Megatron-LM reads --recompute-modules only with --recompute-granularity
    // selective, so it goes unused rather than refusing a run the flag cannot otherwise express.
    warnings.push_back(
        fmt::format("{}: unused: {} recomputes no modules by name (the list applies to recompute: selective)",
                    train.where("recompute_modules"), train.where("recompute")));
    train.at("recompute_modules");  // read, and unused
    return r;
  }
  if (recompute != Recompute::selective)
    train.fail(
        "recompute_modules",
        fmt::format("is Megatron-Core's selective recomputation by module: it needs training.recompute: "
                    "selective (it is {}); remove the key or set recompute: selective",
                    to_string(recompute)));
  if (!train.is_list("recompute_modules"))
    train.fail("recompute_modules", "must be a list of module names, e.g. [core_attn, mla_up_proj, mlp]");
  std::vector<ConfigNode> given = train.list("recompute_modules");
  if (given.empty())
    train.fail("recompute_modules",
               "an empty list: give modules (valid: " + joined(kModelled) + "), or use recompute: none");
  r.core_attn = false;  // an explicit list replaces Megatron-Core's default ["core_attn"]
  for (const auto& e : given) {
    std::string name = e.as_string();
    if (!contains(kMegatronModules, name))
      e.fail("", fmt::format("unknown recompute module '{}'; valid: {}", name, joined(kModelled)));
    if (!contains(kModelled, name))
      e.fail("", fmt::format("recompute module '{}' is valid in Megatron-Core but not modelled by podsim "
                             "yet; modelled: {}",
                             name, joined(kModelled)));
    if (name == "mla_up_proj" && !is_mla(m))
      e.fail("", "mla_up_proj recomputes MLA's up-projections: it needs model.attention: mla");
    set_module(r, name);
  }
  check_recompute_modules(r, recompute, p, train);
  return r;
}

void check_recompute_modules(const RecomputeModules& r, Recompute recompute, const ParallelConfig& p,
                             const ConfigNode& train) {
  if (recompute == Recompute::selective && !r.core_attn && p.cp > 1)
    train.fail(
        "recompute_modules",
        "without core_attn under context parallelism (parallel.cp > 1) is not modelled: podsim's ring "
        "attention reruns the attention core's KV exchange with selective recomputation; add core_attn");
}

bool recomputes_core_attention(const WorkloadConfig& w) {
  return w.training.recompute == Recompute::selective && w.training.recompute_modules.core_attn;
}

bool recomputes_mla_up_proj(const WorkloadConfig& w) {
  return w.training.recompute == Recompute::selective && w.training.recompute_modules.mla_up_proj &&
         is_mla(w.model);
}

bool recomputes_dense_mlp(const WorkloadConfig& w) {
  return w.training.recompute == Recompute::selective && w.training.recompute_modules.mlp;
}

bool recomputes_moe_act(const WorkloadConfig& w) {
  return w.training.recompute == Recompute::selective && w.training.recompute_modules.moe_act &&
         w.moe.enabled();
}

bool recomputes_moe_norm(const WorkloadConfig& w) {
  return w.training.recompute == Recompute::selective && w.training.recompute_modules.layernorm &&
         w.moe.enabled();
}

double selective_recompute_flops_delta(const WorkloadConfig& w, double global_batch, long long moe_layers) {
  if (w.training.recompute != Recompute::selective) return 0;
  const auto& m = w.model;
  double tokens = global_batch * m.seq_len, h = m.hidden, a = m.heads;
  double layers = m.layers + m.mtp_layers;  // MTP layers recompute like the main model's (mtp_ops.cpp)
  double delta = 0;
  if (!w.training.recompute_modules.core_attn) {
    // The attention core's forward FLOPs (what hardware_flops adds for selective), counted causally (or
    // over the window) under flash as hardware_flops does.
    delta -= attention_core_forward_flops(m, global_batch, w.training.attention == Attention::flash);
  }
  if (recomputes_mla_up_proj(w)) {
    double q_in = m.q_lora_rank > 0 ? static_cast<double>(m.q_lora_rank) : h;
    double up = q_in * a * mla_qk_head_dim(m) + m.kv_lora_rank * a * (m.qk_nope_head_dim + m.v_head_dim);
    delta += layers * 2 * tokens * up;
  }
  if (recomputes_dense_mlp(w)) {
    double fc1 = (m.mlp == Mlp::swiglu ? 2.0 : 1.0) * m.ffn_hidden;
    delta += (layers - moe_layers) * 2 * tokens * (h * fc1 + m.ffn_hidden * h);
  }
  return delta;
}

}  // namespace podsim::workload
