#include "podsim/workload/transformer/transformer_config.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <vector>

#include "podsim/core/config_choice.hpp"
#include "podsim/core/config_node.hpp"
#include "podsim/core/error.hpp"
#include "podsim/network/collective_registry.hpp"
#include "podsim/workload/bounded_reads.hpp"
#include "podsim/workload/transformer/mla_math.hpp"
#include "podsim/workload/transformer/model_checks.hpp"
#include "podsim/workload/transformer/moe_config.hpp"
#include "podsim/workload/transformer/optimizer_state.hpp"
#include "podsim/workload/transformer/pipeline_layout.hpp"
#include "podsim/workload/transformer/pipeline_split.hpp"
#include "podsim/workload/transformer/precision_bytes.hpp"
#include "podsim/workload/transformer/recompute_modules.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"

namespace podsim::workload {
namespace {

std::string divisors_up_to(long long n, long long limit) {
  std::vector<std::string> out;
  for (long long d = 1; d <= n && d <= limit; ++d)
    if (n % d == 0) out.push_back(std::to_string(d));
  std::string s;
  for (size_t i = 0; i < out.size(); ++i) s += (i ? ", " : "") + out[i];
  return s;
}

// dp: auto: the most replicas the devices hold that also divide the batch (global_batch by dp, the
// per-replica batch by micro_batch, the interleaved schedule's microbatches into its groups: pp by
// default, interleaved_group_problem); the devices beyond
// dp x tp x cp x pp stay idle (the summary shows "N of M devices").
int auto_data_parallel(const WorkloadConfig& w, const ConfigNode& train, int most) {
  const auto& t = w.training;
  for (int dp = most; dp >= 1; --dp) {
    if (t.global_batch % dp) continue;
    long long per_replica = t.global_batch / dp;
    if (t.micro_batch_auto) return dp;
    if (per_replica % t.micro_batch) continue;
    if (!interleaved_microbatch_problem(w.parallel, per_replica / t.micro_batch).empty()) continue;
    return dp;
  }
  train.fail("global_batch",
             fmt::format("dp: auto found no data-parallel degree up to {} that divides "
                         "global_batch={} (with micro_batch={}{}); change global_batch or set dp",
                         most, t.global_batch, t.micro_batch,
                         w.parallel.schedule == Schedule::interleaved
                             ? ", and microbatches per replica that the interleaved schedule takes: a "
                               "multiple of pp, or groups of parallel.microbatch_group_size"
                             : ""));
  return 1;
}

// HSDP: the ZeRO shards live inside groups of shard_group data-parallel ranks, replicated across the
// dp / shard_group groups.
void validate_shard_group(const ParallelConfig& p, const ConfigNode& par) {
  if (p.shard_group == 0) return;
  if (p.zero == 0)
    par.fail("shard_group",
             fmt::format("shard_group={} shards ZeRO state, but zero is 0 (nothing is sharded); set zero: 1, "
                         "2 or 3, or remove shard_group",
                         p.shard_group));
  if (p.shard_group > p.dp || p.dp % p.shard_group)
    par.fail("shard_group",
             fmt::format("shard_group={} must divide dp={} (0 = the whole data-parallel group); "
                         "valid: 0, {}",
                         p.shard_group, p.dp, divisors_up_to(p.dp, p.dp)));
}

// Resharding after the forward is what ZeRO-3 / FSDP does with the parameters it gathered; the lower stages
// never gather them.
void validate_reshard(const ParallelConfig& p, const ConfigNode& par) {
  if (p.reshard_after_forward || p.zero == 3) return;
  par.fail("reshard_after_forward",
           fmt::format("reshard_after_forward: false keeps ZeRO-3 / FSDP's gathered parameters from the "
                       "forward to the backward, but zero is {} (its parameters are never gathered); set "
                       "zero: 3, or remove reshard_after_forward",
                       p.zero));
}

// parallel.cp, parallel.tp_overlap: the sequence splits into 2*cp chunks, and what the overlap needs.
void validate_context_parallel(const WorkloadConfig& w, const ConfigNode& par, const ConfigNode& model,
                               int devices) {
  const auto& p = w.parallel;
  long long total = static_cast<long long>(p.tp) * p.pp * p.dp * p.cp;
  if (total > devices && p.cp > 1)
    par.fail("dp", fmt::format("tp*cp*pp*dp = {}*{}*{}*{} = {} devices, but the topology has {}; lower a "
                               "degree or add nodes (--set topology.nodes=N)",
                               p.tp, p.cp, p.pp, p.dp, total, devices));
  long long s = w.model.seq_len;
  std::vector<std::string> valid;
  for (long long c = 1; c <= 64 && 2 * c <= s; ++c)
    if (s % (2 * c) == 0) valid.push_back(std::to_string(c));
  std::string valid_cp;
  for (size_t i = 0; i < valid.size(); ++i) valid_cp += (i ? ", " : "") + valid[i];
  if (p.cp > 1 && s % (2LL * p.cp))
    model.fail(
        "seq_len",
        fmt::format("context parallelism (cp={}) gives each rank seq_len/cp tokens as two of 2*cp "
                    "chunks (rank i holds chunks i and 2cp-1-i, which balances causal attention, as "
                    "Megatron-Core does), so 2*cp = {} must divide seq_len {}{}; valid cp: {}",
                    p.cp, 2 * p.cp, s, s % p.cp ? fmt::format(" (cp={} does not even divide it)", p.cp) : "",
                    valid_cp.empty() ? "1" : valid_cp));
  if (p.cp > 1 && p.sequence_parallel && (s / p.cp) % p.tp)
    model.fail("seq_len", fmt::format("sequence parallelism splits each context-parallel rank's seq_len/cp = "
                                      "{} tokens over tp={}; it must divide",
                                      s / p.cp, p.tp));
  if (p.tp_overlap && p.tp > 1 && !p.sequence_parallel)
    par.fail("tp_overlap",
             "tp_overlap overlaps the sequence-parallel all-gathers and reduce-scatters with the GEMMs they "
             "feed (Transformer Engine's userbuffers require sequence parallelism); set "
             "parallel.sequence_parallel: true or tp_overlap: false");
}

}  // namespace

const char* to_string(GradAccumulation g) {
  return kGradAccumulationNames.name(g);
}

const char* to_string(Fp8Recipe r) {
  return kFp8RecipeNames.name(r);
}

const char* to_string(Recompute r) {
  return kRecomputeNames.name(r);
}

const char* to_string(CpAlgorithm a) {
  return kCpAlgorithmNames.name(a);
}

const char* to_string(RankOrder o) {
  return kRankOrderNames.name(o);
}

ParallelLayout rank_layout(const ParallelConfig& p) {
  return {.tp = p.tp,
          .pp = p.pp,
          .dp = p.dp,
          .cp = p.cp,
          .pp_before_dp = p.rank_order == RankOrder::tp_cp_pp_dp,
          .etp = p.etp,
          .ep = p.ep,
          .shard_dp = p.zero > 0 ? p.shard_group : 0};
}

bool rank_order_splits_expert_groups(const WorkloadConfig& w) {
  const auto& p = w.parallel;
  return w.moe.enabled() && p.rank_order == RankOrder::tp_cp_pp_dp && p.pp > 1 && p.ep * p.etp != p.tp * p.cp;
}

std::string interleaved_microbatch_problem(const ParallelConfig& p, long long microbatches) {
  if (p.schedule != Schedule::interleaved) return {};
  return interleaved_group_problem(p.pp, microbatches, p.microbatch_group);
}

const char* to_string(Mlp m) {
  return kMlpNames.name(m);
}

const char* to_string(Norm n) {
  return kNormNames.name(n);
}

ModelConfig read_model_section(const ConfigNode& model, const std::string& name) {
  ModelConfig m;
  m.name = name;
  m.layers = model.positive_integer("layers");
  m.hidden = model.positive_integer("hidden");
  m.heads = model.positive_integer("heads");
  m.ffn_hidden = model.positive_integer_or("ffn_hidden", 4 * m.hidden);
  m.seq_len = model.positive_integer("seq_len");
  m.vocab = model.positive_integer("vocab");
  m.kv_heads = model.positive_integer_or("kv_heads", m.heads);
  m.head_dim = model.positive_integer_or("head_dim", m.hidden / m.heads);
  m.mlp = choice_or(model, "mlp", kMlpNames, Mlp::gelu);
  m.norm = choice_or(model, "norm", kNormNames, Norm::layernorm);
  m.tied_embeddings = model.boolean_or("tied_embeddings", true);
  m.position_embedding =
      choice_or(model, "position_embedding", kPositionEmbeddingNames, PositionEmbedding::learned);
  m.linear_bias = model.boolean_or("linear_bias", true);
  m.dropout = number_in_or(model, "dropout", 0, 0.99, 0.1, "the hidden / attention dropout probability");
  read_mla_keys(model, m);  // model.attention, the MLA dimensions, mtp_layers (mla_config.cpp)
  // Any length: a window as long as the sequence is full causal attention (an HF config's window against a
  // shorter training sequence).
  m.sliding_window = model.integer_in_or("sliding_window", 0, 1LL << 40, 0);
  m.full_attention_every = static_cast<int>(model.integer_in_or("full_attention_every", 0, m.layers, 0));
  if (m.full_attention_every > 0 && m.sliding_window == 0)
    model.fail("full_attention_every", "needs model.sliding_window (the window the other layers use)");
  if (m.sliding_window > 0 && m.attention_type == AttentionType::mla)
    model.fail("sliding_window", "sliding-window attention with model.attention: mla is not modelled");
  model.reject_unknown_keys();
  validate_model_shape(m, model);
  return m;
}

topology::Precision read_precision(const ConfigNode& train) {
  try {
    return choice_or(train, "precision", topology::kPrecisionNames, topology::Precision::bf16);
  } catch (const std::invalid_argument& e) {
    train.fail("precision", e.what());
  }
}

void check_precision_on_device(const ConfigNode& train, topology::Precision precision,
                               const topology::DeviceSpec& device, const std::string& topology_file) {
  if (device.peak_flops.count(precision)) return;
  std::string valid;
  for (const auto& [p, _] : device.peak_flops)
    valid += (valid.empty() ? "" : ", ") + std::string(topology::to_string(p));
  train.fail("precision", fmt::format("the {} has no {} peak (peak_tflops in {}); valid on this device: {}",
                                      device.name, topology::to_string(precision), topology_file, valid));
}

Recompute read_recompute(const ConfigNode& train) {
  return choice_or(train, "recompute", kRecomputeNames, Recompute::none);
}

void resolve_fp8_layout(TrainingConfig& t, const topology::DeviceSpec& device) {
  t.fp8_transposed_copies = device.architecture != topology::Architecture::blackwell;
}

void resolve_attention(const ConfigNode& train, TrainingConfig& t, const topology::DeviceSpec& device,
                       bool profile_has_fused_attention) {
  using topology::Architecture;
  if (t.attention_auto) {
    bool hopper_or_newer =
        device.architecture == Architecture::hopper || device.architecture == Architecture::blackwell;
    t.attention = hopper_or_newer && profile_has_fused_attention ? Attention::flash : Attention::unfused;
    return;
  }
  if (t.attention == Attention::flash && !profile_has_fused_attention)
    train.fail("attention",
               fmt::format("the {} device profile has no fused-attention efficiencies (an "
                           "`attention:` section with forward_efficiency and backward_efficiency); "
                           "use attention: unfused, or add them with their source",
                           device.name));
}

double read_grad_reduce_bytes(const ConfigNode& train, topology::Precision precision) {
  std::string grad = train.choice_or("grad_reduce_precision", {"same", "fp32", "fp16", "bf16"}, "same");
  // "same" = the gradients' precision: bf16 under an fp8 GEMM format (precision_bytes.hpp).
  return grad == "same" ? activation_bytes(precision) : grad == "fp32" ? 4 : 2;
}

GradAccumulation read_grad_accumulation(const ConfigNode& train) {
  return choice_or(train, "grad_accumulation", kGradAccumulationNames, GradAccumulation::fp32);
}

// parallel.dp_bucket_MB: a size in MB, or megatron_core for Megatron-Core's DP-sized buckets.
void read_dp_bucket(const ConfigNode& par, ParallelConfig& p) {
  if (par.has("dp_bucket_MB")) {
    std::string text = par.string("dp_bucket_MB");
    if (text == "megatron_core") {
      p.dp_bucket_megatron_core = true;
      return;
    }
    char* end = nullptr;
    std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0')
      par.fail("dp_bucket_MB",
               fmt::format("must be a bucket size in MB (e.g. 25, PyTorch DDP's) or megatron_core (max(40M, "
                           "1M x dp x cp) parameters, as Megatron-Core sizes it), got '{}'",
                           text));
  }
  p.dp_bucket_bytes = number_in_or(par, "dp_bucket_MB", 0.001, 1e5, 25,
                                   "the gradient bucket of the overlapped data-parallel reduction, in MB "
                                   "(PyTorch DDP uses 25), or megatron_core") *
                      1e6;
}

WorkloadConfig read_transformer_workload(const ConfigNode& root, int devices, int devices_per_node) {
  WorkloadConfig w;
  w.name = read_document_name(root);
  w.model = read_model_section(root.child("model"), w.name);

  ConfigNode par = root.child("parallel");
  w.parallel.tp = static_cast<int>(par.integer_in_or("tp", 1, 1 << 20, 1));
  w.parallel.pp = static_cast<int>(par.integer_in_or("pp", 1, 1 << 20, 1));
  w.parallel.dp = int_in_or_auto(par, "dp", 1, 1 << 30, 0);
  w.parallel.schedule =
      choice_or(par, "schedule", kScheduleNames,
                {Schedule::gpipe, Schedule::one_f_one_b, Schedule::interleaved}, Schedule::one_f_one_b);
  // Virtual stages are model chunks of the interleaved schedule only: `auto` means 1 for gpipe and 1f1b,
  // which run one chunk per stage (an explicit value above 1 with them fails in validation).
  bool interleaved = w.parallel.schedule == Schedule::interleaved;
  int v = int_in_or_auto(par, "virtual_stages", 1, 1 << 20, interleaved ? 0 : 1);
  if (v == 0 && !interleaved) v = 1;
  w.parallel.virtual_stages_auto = v == 0;
  w.parallel.virtual_stages = v;
  w.parallel.sequence_parallel = par.boolean_or("sequence_parallel", false);
  long long zero = par.integer_or("zero", 0);
  if (zero < 0 || zero > 3) par.fail("zero", fmt::format("ZeRO stage must be 0, 1, 2 or 3, got {}", zero));
  w.parallel.zero = static_cast<int>(zero);
  w.parallel.shard_group = static_cast<int>(par.integer_in_or("shard_group", 0, 1 << 30, 0));
  w.parallel.reshard_after_forward = par.boolean_or("reshard_after_forward", true);
  w.parallel.scatter_gather = par.boolean_or("scatter_gather", true);
  w.parallel.overlap_p2p_comm = par.boolean_or("overlap_p2p_comm", false);
  w.parallel.overlap_p2p_comm_warmup_flush = par.boolean_or("overlap_p2p_comm_warmup_flush", false);
  if (w.parallel.overlap_p2p_comm_warmup_flush && !w.parallel.overlap_p2p_comm)
    par.fail(
        "overlap_p2p_comm_warmup_flush",
        "extends parallel.overlap_p2p_comm to the warm-up and the flush, which is off; set "
        "parallel.overlap_p2p_comm: true or remove overlap_p2p_comm_warmup_flush (Megatron-Core requires "
        "both)");
  w.parallel.microbatch_group = static_cast<int>(par.integer_in_or("microbatch_group_size", 1, 1 << 24, 0));
  if (w.parallel.microbatch_group > 0 && !interleaved)
    par.fail("microbatch_group_size",
             "groups the microbatches of the interleaved schedule's chunks; set parallel.schedule: "
             "interleaved with virtual_stages > 1, or remove microbatch_group_size");
  w.parallel.dp_overlap = par.boolean_or("dp_overlap", true);
  read_dp_bucket(par, w.parallel);
  w.parallel.dp_algorithm =
      par.choice_or("dp_algorithm", network::algorithm_names(network::CollectiveKind::all_reduce),
                    network::to_string(network::Algorithm::ring));
  w.parallel.cp = static_cast<int>(par.integer_in_or("cp", 1, 1 << 20, 1));
  w.parallel.cp_algorithm = choice_or(par, "cp_algorithm", kCpAlgorithmNames, CpAlgorithm::ring);
  w.parallel.rank_order = choice_or(par, "rank_order", kRankOrderNames, RankOrder::tp_cp_dp_pp);
  w.parallel.tp_overlap = par.boolean_or("tp_overlap", false);
  if (par.has("tp_overlap_gemms") && !w.parallel.tp_overlap)
    par.fail("tp_overlap_gemms",
             "configures Transformer Engine's userbuffers overlap, which is off; set "
             "parallel.tp_overlap: true or remove tp_overlap_gemms");
  w.parallel.tp_overlap_gemms = read_tp_overlap_gemms(par);
  w.parallel.embedding_in_pipeline_split = par.boolean_or("embedding_in_pipeline_split", false);
  w.parallel.loss_in_pipeline_split = par.boolean_or("loss_in_pipeline_split", false);
  read_pipeline_layout(par, w.model, w.parallel);  // Megatron-Core's explicit layout (pipeline_layout.cpp)
  read_expert_parallel(par, w.parallel);
  par.reject_unknown_keys();

  ConfigNode train = root.child("training");
  w.training.global_batch = train.positive_integer("global_batch");
  int mb = int_in_or_auto(train, "micro_batch", 1, 1 << 30, 1);
  w.training.micro_batch_auto = mb == 0;
  w.training.micro_batch = mb;
  w.training.precision = read_precision(train);
  w.training.recompute = read_recompute(train);
  w.training.recompute_modules =
      read_recompute_modules(train, w.training.recompute, w.model, w.parallel, w.warnings);
  w.training.fused_cross_entropy =
      train.choice_or("cross_entropy", {"unfused", "fused"}, "unfused") == "fused";
  w.training.fp8_fast_accumulation =
      choice_or(train, "fp8_fast_accumulation", kFastAccumulationNames, FastAccumulation::fprop);
  // Like Megatron-LM's --fp8-recipe, meaningful with the fp8 format only (the block formats carry their
  // own scaling); accepted and unused with the others, so one recipe file serves every precision.
  w.training.fp8_recipe = choice_or(train, "fp8_recipe", kFp8RecipeNames, Fp8Recipe::delayed);
  std::string attention = train.choice_or("attention", {"auto", "flash", "unfused"}, "auto");
  w.training.attention_auto = attention == "auto";
  w.training.attention = attention == "flash" ? Attention::flash : Attention::unfused;
  // Checked against the device profile's releases where the topology is known (transformer_loader.cpp).
  w.training.attention_library = train.string_or("attention_library", "latest");
  w.training.grad_reduce_bytes = read_grad_reduce_bytes(train, w.training.precision);
  w.training.grad_accumulation = read_grad_accumulation(train);
  w.training.optimizer = read_optimizer_state(train, w.training.precision);
  // The buffer gradients accumulate in: fp32 main_grad (Megatron local DDP), the parameter precision
  // (PyTorch DDP), or, fused into the wgrad GEMM, Megatron-Core DDP's grad buffer, whose dtype is the
  // reduction's (grad_reduce_in_fp32: fp32, else bf16).
  switch (w.training.grad_accumulation) {
    case GradAccumulation::same: w.training.main_grad_bytes = activation_bytes(w.training); break;
    case GradAccumulation::fused: w.training.main_grad_bytes = w.training.grad_reduce_bytes; break;
    case GradAccumulation::fp32: w.training.main_grad_bytes = 4; break;
  }
  train.reject_unknown_keys();

  if (w.parallel.dp == 0) {
    long long mp = static_cast<long long>(w.parallel.tp) * w.parallel.pp * w.parallel.cp;
    if (mp > devices && w.parallel.cp > 1)
      par.fail("cp", fmt::format("tp*cp*pp = {}*{}*{} = {} is more than the {} devices of the topology",
                                 w.parallel.tp, w.parallel.cp, w.parallel.pp, mp, devices));
    if (mp > devices)
      par.fail("tp", fmt::format("tp*pp = {}*{} = {} is more than the {} devices of the topology; lower a "
                                 "degree or add nodes (--set topology.nodes=N)",
                                 w.parallel.tp, w.parallel.pp, mp, devices));
    w.parallel.dp = auto_data_parallel(w, root.child("training"), static_cast<int>(devices / mp));
  }
  validate_transformer_workload(w, root, devices);
  read_moe_section(root, w, devices, devices_per_node);
  // Megatron-Core builds the expert groups in the same order as the dense ones (moe_step.cpp); with stages
  // before replicas it asserts that the expert and dense data-parallel sizes agree (or pp is 1), which
  // keeps an expert group inside one stage of one replica.
  const auto& p = w.parallel;
  if (rank_order_splits_expert_groups(w))
    root.child("parallel")
        .fail("rank_order",
              fmt::format("tp-cp-pp-dp with a moe: section and pp {} > 1 needs ep x etp = tp x cp (the "
                          "expert and dense data-parallel sizes equal, as Megatron-Core asserts), but ep x "
                          "etp = {} x {} = {} and tp x cp = {} x {} = {}; use tp-cp-dp-pp or change ep",
                          p.pp, p.ep, p.etp, p.ep * p.etp, p.tp, p.cp, p.tp * p.cp));
  return w;
}

void validate_transformer_workload(const WorkloadConfig& w, const ConfigNode& root, int devices) {
  ConfigNode par = root.child("parallel");
  ConfigNode model = root.child("model");
  ConfigNode train = root.child("training");
  const auto& p = w.parallel;
  const auto& m = w.model;
  validate_context_parallel(w, par, model, devices);
  check_recompute_modules(w.training.recompute_modules, w.training.recompute, w.parallel, train);
  validate_mla(w, root);
  validate_moe_overlap(w,
                       root);  // w.moe is read after this on a first read: from `podsim plan` per candidate
  long long total = static_cast<long long>(p.tp) * p.pp * p.dp * p.cp;
  if (total > devices)
    par.fail(
        "dp",
        fmt::format("tp*pp*dp = {}*{}*{} = {} devices, but the topology has {}; lower a degree or add nodes "
                    "(--set topology.nodes=N)",
                    p.tp, p.pp, p.dp, total, devices));
  validate_model_split(m, model, p.tp);
  if (m.ffn_hidden % p.tp)
    model.fail("ffn_hidden", fmt::format("ffn_hidden {} is not divisible by tp={}", m.ffn_hidden, p.tp));
  if (m.vocab % p.tp)
    model.fail(
        "vocab",
        fmt::format("vocab {} is not divisible by tp={} (Megatron pads the vocabulary; pad it here too)",
                    m.vocab, p.tp));
  if (p.sequence_parallel && p.cp == 1 && m.seq_len % p.tp)
    model.fail("seq_len", fmt::format("sequence parallelism splits seq_len {} over tp={}; it must divide",
                                      m.seq_len, p.tp));
  if (p.pp > m.layers)
    par.fail("pp",
             fmt::format("pp={} stages for {} layers: every stage needs at least one layer", p.pp, m.layers));
  // Transformer Engine's ring (p2p) context parallelism has no sliding-window attention (its fused
  // attention is disabled for it, dot_product_attention/utils.py); the all-gather variant has. Only a model
  // with windowed layers is refused (full_attention_every 1 leaves none; the plan's check agrees).
  if (p.cp > 1 && windowed_layers_in(m, 0, m.layers) > 0 && p.cp_algorithm == CpAlgorithm::ring)
    par.fail("cp_algorithm", fmt::format("ring context parallelism (cp={}) with model.sliding_window {}: "
                                         "Transformer Engine runs sliding-window attention only with the "
                                         "all-gather variant; set parallel.cp_algorithm: all_gather",
                                         p.cp, m.sliding_window));
  int v = p.virtual_stages_auto ? 1 : p.virtual_stages;
  if (p.schedule != Schedule::interleaved && v != 1)
    par.fail("virtual_stages",
             fmt::format("virtual_stages={} splits each stage into model chunks, which only the interleaved "
                         "schedule runs; with schedule {} use virtual_stages: 1 or auto (= 1), or set "
                         "schedule: interleaved",
                         v, to_string(p.schedule)));
  if (p.schedule == Schedule::interleaved && p.pp == 1)
    par.fail(
        "schedule",
        fmt::format("the interleaved schedule needs pp > 1 (pp is 1: {}); without a pipeline set schedule: "
                    "1f1b and virtual_stages: 1 (--set workload.parallel.schedule=1f1b --set "
                    "workload.parallel.virtual_stages=1), or keep pp > 1",
                    par.where("pp")));
  check_pipeline_split(w, v, par);
  if (w.training.global_batch % p.dp)
    train.fail("global_batch",
               fmt::format("global_batch={} is not divisible by dp={}", w.training.global_batch, p.dp));
  long long per_replica = w.training.global_batch / p.dp;
  if (!w.training.micro_batch_auto) {
    if (per_replica % w.training.micro_batch)
      train.fail("micro_batch",
                 fmt::format("global_batch/dp = {} sequences per replica is not divisible by micro_batch={}; "
                             "valid: {}",
                             per_replica, w.training.micro_batch, divisors_up_to(per_replica, 64)));
    long long microbatches = per_replica / w.training.micro_batch;
    if (std::string why = interleaved_microbatch_problem(p, microbatches); !why.empty()) {
      if (p.microbatch_group > 0)
        par.fail("microbatch_group_size", fmt::format("the interleaved schedule: {}", why));
      train.fail("micro_batch", fmt::format("the interleaved schedule: {}", why));
    }
    if (microbatches > 10000000)
      train.fail("micro_batch",
                 fmt::format("{} microbatches per step is beyond what podsim simulates (at most 10^7)",
                             microbatches));
  }
  validate_shard_group(p, par);
  validate_reshard(p, par);
}

}  // namespace podsim::workload
