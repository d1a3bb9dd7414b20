// Megatron-LM arguments -> transformer_lm overrides (megatron_args.hpp). Defaults are Megatron-LM's where
// an argument implies a value podsim needs (--num-query-groups 1, --moe-router-topk 2,
// --make-vocab-size-divisible-by 128); keys the command line does not state stay the workload file's.
#include "podsim/driver/megatron_args.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <regex>
#include <set>

#include "megatron_cmdline.hpp"
#include "podsim/core/error.hpp"
#include "podsim/core/text_input.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"

namespace podsim::driver {
namespace {

// Words separated by spaces or commas (Megatron's nargs='*' lists, as the command line gives them).
std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> out;
  std::string word;
  for (char c : text + " ") {
    if (c == ' ' || c == ',' || c == '\t') {
      if (!word.empty()) out.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  return out;
}

class MegatronMapper {
 public:
  MegatronMapper(const MegatronCommandLine& cl, std::string source) : cl_(cl), source_(std::move(source)) {
    for (const auto& [name, value] : cl.args) args_[name] = value;  // argparse: the last one wins
  }

  JobImport map() {
    model();
    moe();
    parallel();
    training();
    leftovers();
    return std::move(out_);
  }

 private:
  bool has(const std::string& name) {
    used_.insert(name);
    return args_.count(name) > 0;
  }
  std::optional<std::string> word(const std::string& name) {
    if (!has(name)) return std::nullopt;
    const auto& v = args_[name];
    if (!v) throw InputError(fmt::format("{}: --{} needs a value", source_, name));
    if (v->find('$') != std::string::npos)
      throw InputError(
          fmt::format("{}: --{} {}: an unexpanded shell variable; give the value (e.g. copy the "
                      "command the script prints with `set -x`)",
                      source_, name, *v));
    return v;
  }
  std::optional<long long> integer(const std::string& name, long long min = 1) {
    auto v = word(name);
    if (!v) return std::nullopt;
    auto x = parse_finite_number(*v);
    if (!x || *x != static_cast<double>(static_cast<long long>(*x)) || *x < static_cast<double>(min))
      throw InputError(fmt::format("{}: --{} {}: expected an integer >= {}", source_, name, *v, min));
    return static_cast<long long>(*x);
  }
  std::optional<double> number(const std::string& name) {
    auto v = word(name);
    if (!v) return std::nullopt;
    auto x = parse_finite_number(*v);
    if (!x || *x < 0) throw InputError(fmt::format("{}: --{} {}: expected a number >= 0", source_, name, *v));
    return x;
  }
  std::string choice(const std::string& name, const std::map<std::string, std::string>& to_podsim) {
    auto v = word(name).value_or("");
    auto it = to_podsim.find(v);
    if (it != to_podsim.end()) return it->second;
    std::string valid;
    for (const auto& [k, p] : to_podsim) valid += (valid.empty() ? "" : ", ") + k;
    throw InputError(fmt::format("{}: --{} {}: podsim reads {}", source_, name, v, valid));
  }
  void set(const std::string& key, const std::string& value) {
    out_.sets.push_back(fmt::format("workload.{}={}", key, value));
  }
  void set(const std::string& key, long long value) { set(key, std::to_string(value)); }
  void set_int(const std::string& name, const std::string& key, long long min = 1) {
    if (auto v = integer(name, min)) set(key, *v);
  }
  void warn(const std::string& text) { out_.warnings.push_back(fmt::format("{}: {}", source_, text)); }
  void note(const std::string& text) { out_.notes.push_back(fmt::format("{}: {}", source_, text)); }

  void model();
  void attention_and_vocab();
  void sliding_window();
  void moe();
  void parallel();
  void virtual_stages();
  void training();
  void precision();
  void cross_entropy();
  void optimizer_state();
  void leftovers();

  const MegatronCommandLine& cl_;
  std::string source_;
  std::map<std::string, std::optional<std::string>> args_;
  std::set<std::string> used_;
  JobImport out_;
};

void MegatronMapper::model() {
  set_int("num-layers", "model.layers");
  set_int("hidden-size", "model.hidden");
  set_int("num-attention-heads", "model.heads");
  set_int("ffn-hidden-size", "model.ffn_hidden");
  set_int("kv-channels", "model.head_dim");
  set_int("seq-length", "model.seq_len");
  if (has("swiglu")) set("model.mlp", "swiglu");
  if (has("squared-relu")) set("model.mlp", "squared_relu");
  if (has("normalization"))
    set("model.norm", choice("normalization", {{"LayerNorm", "layernorm"}, {"RMSNorm", "rmsnorm"}}));
  if (has("use-rotary-position-embeddings")) set("model.position_embedding", "rope");
  if (has("position-embedding-type")) {
    std::string p =
        choice("position-embedding-type",
               {{"learned_absolute", "learned"}, {"rope", "rope"}, {"none", "rope"}, {"mrope", "rope"}});
    if (*args_["position-embedding-type"] != "rope" && p == "rope")
      warn(fmt::format("--position-embedding-type {} costed as rope (no parameters)",
                       *args_["position-embedding-type"]));
    set("model.position_embedding", p);
  }
  if (auto m = integer("max-position-embeddings"))
    note(
        fmt::format("--max-position-embeddings {} ignored: the sequence is --seq-length (a learned position "
                    "table is costed seq_len x hidden)",
                    *m));
  if (has("untie-embeddings-and-output-weights")) set("model.tied_embeddings", "false");
  if (has("disable-bias-linear")) set("model.linear_bias", "false");
  if (has("add-bias-linear")) set("model.linear_bias", "true");
  auto hidden = number("hidden-dropout"), attn = number("attention-dropout");
  if (hidden && attn && *hidden != *attn)
    warn(
        fmt::format("--hidden-dropout {} and --attention-dropout {} differ; podsim has one model.dropout "
                    "(its masks in activation memory and its kernels): took {}",
                    *hidden, *attn, *hidden));
  if (hidden || attn) set("model.dropout", fmt::format("{}", hidden ? *hidden : *attn));
  if (has("qk-layernorm")) warn("--qk-layernorm: its 2 x head_dim parameters a layer are not counted");
  attention_and_vocab();
}

// --window-size (left, right) and --window-attn-skip-freq (an integer N, or a Python list expression such
// as "[1,1,1,0]*3", 1 a sliding-window layer): model.sliding_window = left + 1 and full_attention_every.
void MegatronMapper::sliding_window() {
  auto size = word("window-size");
  auto skip = word("window-attn-skip-freq");
  if (!size) {
    if (skip) note("--window-attn-skip-freq ignored without --window-size");
    return;
  }
  static const std::regex pair(R"(\(?\s*(-?\d+)\s*,\s*(-?\d+)\s*\)?)");
  std::smatch m;
  if (!std::regex_match(*size, m, pair))
    throw InputError(
        fmt::format("{}: --window-size '{}': expected two integers 'left,right' (Megatron's "
                    "tuple, e.g. 127,0)",
                    source_, *size));
  for (int i : {1, 2})
    if (m[i].str().size() > 10)  // a sign and nine digits: any window a model has, and no overflow below
      throw InputError(fmt::format("{}: --window-size '{}': {} is out of range for a window in tokens",
                                   source_, *size, m[i].str()));
  long long left = std::stoll(m[1].str()), right = std::stoll(m[2].str());
  if (left < 0) return;  // (-1, 0): no window
  if (right != 0)
    warn(
        fmt::format("--window-size {}: a window reaching {} keys ahead is not causal; costed as the causal "
                    "window of {} keys",
                    *size, right, left + 1));
  set("model.sliding_window", left + 1);
  if (!skip) return;
  if (auto n = parse_finite_number(*skip); n && *n >= 1 && *n == std::floor(*n)) {
    set("model.full_attention_every", static_cast<long long>(*n));
    return;
  }
  static const std::regex list(R"(\(?\[([01](?:\s*,\s*[01])*)\]\s*\*\s*(\d+)\)?)");
  std::vector<bool> pattern;
  if (std::regex_match(*skip, m, list)) {
    std::vector<bool> once;
    for (char c : m[1].str())
      if (c == '0' || c == '1') once.push_back(c == '1');
    // Megatron's list has one entry per layer: a pattern longer than any model is a typo, refused before
    // it is built (the search for its period is quadratic in its length).
    constexpr size_t kMostLayers = 10000;
    if (m[2].str().size() > 6 || once.size() * std::stoull(m[2].str()) > kMostLayers)
      throw InputError(
          fmt::format("{}: --window-attn-skip-freq {}: {} layers; Megatron's list has one "
                      "entry per layer (at most {} here)",
                      source_, *skip, m[2].str() + " x " + std::to_string(once.size()), kMostLayers));
    for (unsigned long long r = 0; r < std::stoull(m[2].str()); ++r)
      pattern.insert(pattern.end(), once.begin(), once.end());
  }
  auto every = pattern.empty() ? std::nullopt : workload::full_attention_every_of(pattern);
  if (every)
    set("model.full_attention_every", *every);
  else
    warn(
        fmt::format("--window-attn-skip-freq {}: only an integer or a periodic '[..]*N' list is "
                    "represented; every layer costed with the window",
                    *skip));
}

void MegatronMapper::attention_and_vocab() {
  sliding_window();
  if (has("group-query-attention"))
    set("model.kv_heads", integer("num-query-groups").value_or(1));  // Megatron's default: 1 group
  else if (has("num-query-groups"))
    note("--num-query-groups ignored without --group-query-attention (as Megatron-LM does)");
  if (has("multi-latent-attention")) {
    set("model.attention", "mla");
    set("model.q_lora_rank", integer("q-lora-rank", 0).value_or(0));  // None in Megatron: no query latent
    set("model.kv_lora_rank", integer("kv-lora-rank").value_or(32));
    set("model.qk_nope_head_dim", integer("qk-head-dim").value_or(128));
    set("model.qk_rope_head_dim", integer("qk-pos-emb-head-dim").value_or(64));
    set("model.v_head_dim", integer("v-head-dim").value_or(128));
  }
  set_int("mtp-num-layers", "model.mtp_layers", 0);
  if (auto v = integer("vocab-size")) {
    // Megatron pads the vocabulary to a multiple of make-vocab-size-divisible-by x tp (training/tokenizer).
    long long multiple = integer("make-vocab-size-divisible-by").value_or(128) *
                         integer("tensor-model-parallel-size").value_or(1);
    long long padded = (*v + multiple - 1) / multiple * multiple;
    if (padded != *v)
      note(fmt::format("--vocab-size {} padded to {} (a multiple of {}), as Megatron-LM pads it", *v, padded,
                       multiple));
    set("model.vocab", padded);
  } else {
    note("no --vocab-size (the tokenizer decides it): model.vocab stays the workload's");
  }
}

void MegatronMapper::moe() {
  auto experts = integer("num-experts");
  if (!experts) return;
  set("moe.experts", *experts);
  set("moe.top_k", integer("moe-router-topk").value_or(2));  // Megatron's default
  set_int("moe-ffn-hidden-size", "moe.ffn_hidden");
  if (auto shared = integer("moe-shared-expert-intermediate-size")) {
    set("moe.shared_experts", 1);
    set("moe.shared_ffn_hidden", *shared);
  }
  if (auto f = word("moe-layer-freq")) {
    static const std::regex dense_then_moe(R"(\(?\[0\]\*(\d+)\+\[1\]\*(\d+)\)?)");
    std::smatch m;
    if (auto n = parse_finite_number(*f); n && *n >= 1)
      set("moe.layer_freq", static_cast<long long>(*n));
    else if (std::regex_match(*f, m, dense_then_moe))
      set("moe.first_dense_layers", m[1].str());
    else
      warn(
          fmt::format("--moe-layer-freq {}: only an integer or ([0]*N+[1]*M) is represented; the "
                      "workload's moe.layer_freq / first_dense_layers stay",
                      *f));
  }
  if (has("moe-router-score-function"))
    set("moe.router", choice("moe-router-score-function", {{"softmax", "softmax"}, {"sigmoid", "sigmoid"}}));
  set_int("moe-router-num-groups", "moe.router_groups");  // group-limited routing (DeepSeek-V3: 8 / 4)
  set_int("moe-router-group-topk", "moe.router_group_topk");
  if (has("moe-token-dispatcher-type")) {
    std::string d = choice("moe-token-dispatcher-type",
                           {{"alltoall", "alltoall"}, {"allgather", "allgather"}, {"flex", "flex"}});
    set("moe.dispatcher", d);  // flex: DeepEP / HybridEP's per-node deduplication (moe_config.hpp)
  }
  if (auto cf = number("moe-expert-capacity-factor")) set("moe.capacity_factor", fmt::format("{}", *cf));
  if (has("moe-shared-expert-overlap")) set("moe.overlap", "dispatch");
  // Combined 1F1B (Megatron-Core refuses it together with the shared-expert overlap).
  if (has("overlap-moe-expert-parallel-comm")) set("moe.overlap", "combined_1f1b");
}

void MegatronMapper::parallel() {
  set_int("tensor-model-parallel-size", "parallel.tp");
  set_int("pipeline-model-parallel-size", "parallel.pp");
  set_int("context-parallel-size", "parallel.cp");
  set_int("expert-model-parallel-size", "parallel.ep");
  set_int("expert-tensor-parallel-size", "parallel.etp");
  virtual_stages();
  if (has("sequence-parallel")) set("parallel.sequence_parallel", "true");
  if (has("use-distributed-optimizer")) set("parallel.zero", 1);
  bool fsdp = has("use-megatron-fsdp") | has("use-torch-fsdp2");
  if (has("data-parallel-sharding-strategy"))
    set("parallel.zero",
        choice("data-parallel-sharding-strategy",
               {{"no_shard", "0"}, {"optim", "1"}, {"optim_grads", "2"}, {"optim_grads_params", "3"}}));
  else if (fsdp)
    set("parallel.zero", 3);  // FSDP shards parameters, gradients and optimizer state
  // Megatron-LM passes it to torch's fully_shard only with --use-torch-fsdp2 (training.py get_model).
  if (has("torch-fsdp2-no-reshard-after-forward")) {
    if (has("use-torch-fsdp2") && !has("data-parallel-sharding-strategy"))
      set("parallel.reshard_after_forward", "false");
    else
      note(
          "--torch-fsdp2-no-reshard-after-forward ignored: Megatron-LM applies it only to --use-torch-fsdp2 "
          "(ZeRO-3)");
  }
  if (has("overlap-grad-reduce") | has("overlap-param-gather")) set("parallel.dp_overlap", "true");
  if (has("overlap-grad-reduce") != has("overlap-param-gather"))
    note("podsim's parallel.dp_overlap overlaps both the gradient reduction and the parameter gather");
  if (has("tp-comm-overlap")) set("parallel.tp_overlap", "true");
  if (has("account-for-embedding-in-pipeline-split")) set("parallel.embedding_in_pipeline_split", "true");
  if (has("account-for-loss-in-pipeline-split")) set("parallel.loss_in_pipeline_split", "true");
  if (has("use-tp-pp-dp-mapping")) set("parallel.rank_order", "tp-cp-pp-dp");
  // Megatron-Core's layout string as it is (the workload reader checks it against the model and pp).
  if (auto layout = word("pipeline-model-parallel-layout")) set("parallel.pipeline_layout", *layout);
}

// Megatron-LM states model chunks per stage directly (--num-virtual-stages-per-pipeline-rank; NeMo calls
// it virtual_pipeline_model_parallel_size) or as layers per chunk.
void MegatronMapper::virtual_stages() {
  auto v = integer("num-virtual-stages-per-pipeline-rank");
  if (!v) v = integer("virtual-pipeline-model-parallel-size");
  if (auto per_chunk = integer("num-layers-per-virtual-pipeline-stage")) {
    auto layers = integer("num-layers");
    long long pp = integer("pipeline-model-parallel-size").value_or(1);
    if (!layers || *layers % (pp * *per_chunk))
      throw InputError(
          fmt::format("{}: --num-layers-per-virtual-pipeline-stage {} needs --num-layers divisible "
                      "by it x --pipeline-model-parallel-size {}",
                      source_, *per_chunk, pp));
    v = *layers / (pp * *per_chunk);
  }
  long long pp = integer("pipeline-model-parallel-size").value_or(1);
  if (v && *v > 1) {
    set("parallel.schedule", "interleaved");
    set("parallel.virtual_stages", *v);
    // Megatron-LM overlaps the interleaved schedule's p2p communication unless told not to
    // (--no-overlap-p2p-communication; arguments.py turns it off without virtual stages).
    set("parallel.overlap_p2p_comm", has("no-overlap-p2p-communication") ? "false" : "true");
    if (auto group = integer("microbatch-group-size-per-virtual-pipeline-stage"))
      set("parallel.microbatch_group_size", *group);
  } else if (pp > 1 || v) {
    set("parallel.schedule", "1f1b");
    set("parallel.virtual_stages", 1);
  }
}

void MegatronMapper::training() {
  set_int("micro-batch-size", "training.micro_batch");
  set_int("global-batch-size", "training.global_batch");
  if (has("recompute-granularity"))
    set("training.recompute",
        choice("recompute-granularity", {{"full", "full"}, {"selective", "selective"}}));
  if (auto modules = word("recompute-modules")) {
    std::string list;  // "mla_up_proj mlp" -> [mla_up_proj, mlp]; the workload reader checks each name
    for (const auto& m : split_words(*modules)) list += (list.empty() ? "" : ", ") + m;
    set("training.recompute_modules", "[" + list + "]");
  }
  auto method = word("recompute-method");
  auto n = integer("recompute-num-layers");
  if ((method && *method == "block") || (n && *n != 1))
    warn(
        fmt::format("--recompute-method {} --recompute-num-layers {}: podsim's full recomputation recomputes "
                    "every layer (Megatron's uniform with 1 layer per group)",
                    method.value_or("uniform"), n ? std::to_string(*n) : "-"));
  precision();
  if (has("no-gradient-accumulation-fusion")) set("training.grad_accumulation", "fp32");
  if (has("accumulate-allreduce-grads-in-fp32")) set("training.grad_reduce_precision", "fp32");
  if (has("grad-reduce-in-bf16")) set("training.grad_reduce_precision", "bf16");
  cross_entropy();
  optimizer_state();
  if (has("use-flash-attn")) set("training.attention", "flash");
  if (has("attention-backend"))
    set("training.attention", choice("attention-backend", {{"flash", "flash"},
                                                           {"fused", "flash"},
                                                           {"unfused", "unfused"},
                                                           {"local", "unfused"},
                                                           {"auto", "auto"}}));
}

// The loss: --cross-entropy-loss-fusion with --cross-entropy-fusion-impl te runs Transformer Engine's fused
// kernels (podsim's fused loss); with native (Megatron's default) Megatron-Core's jit-fused fp32 version
// (megatron/core/fusions/fused_cross_entropy.py), whose fp32 passes podsim costs as the unfused loss.
void MegatronMapper::cross_entropy() {
  bool fusion = has("cross-entropy-loss-fusion");
  std::string impl = has("cross-entropy-fusion-impl")
                         ? choice("cross-entropy-fusion-impl", {{"te", "te"}, {"native", "native"}})
                         : "native";
  if (!fusion) {
    if (impl == "te") note("--cross-entropy-fusion-impl te without --cross-entropy-loss-fusion does nothing");
    return;
  }
  set("training.cross_entropy", impl == "te" ? "fused" : "unfused");
  if (impl == "native")
    note(
        "--cross-entropy-loss-fusion with the native implementation: Megatron-Core's jit-fused fp32 loss, "
        "costed as training.cross_entropy: unfused (the same fp32 passes); --cross-entropy-fusion-impl te "
        "would run Transformer Engine's kernels (training.cross_entropy: fused)");
}

// Megatron-Core's precision-aware optimizer (Transformer Engine's FusedAdam) holds the moments in
// --exp-avg-dtype / --exp-avg-sq-dtype and the main weights in --main-params-dtype. With fp32 main weights
// and bf16 ones in the model it keeps only their 16 low bits (OptimizerConfig.store_param_remainders,
// default True since Megatron-LM f2ece182, with Transformer Engine >= 2.1), except under fp8 recipes other
// than delayed scaling, where Megatron-Core keeps the fp32 copy itself (use_precision_aware_optimizer_no_
// fp8_or_ds_fp8). Without the flag the dtype arguments do nothing.
void MegatronMapper::optimizer_state() {
  auto main =
      has("main-params-dtype") ? choice("main-params-dtype", {{"fp32", "fp32"}, {"fp16", "fp16"}}) : "fp32";
  const std::map<std::string, std::string> moments = {
      {"fp32", "fp32"}, {"fp16", "fp16"}, {"bf16", "bf16"}, {"fp8", "fp8"}};
  auto exp_avg = has("exp-avg-dtype") ? choice("exp-avg-dtype", moments) : "fp32";
  auto exp_avg_sq = has("exp-avg-sq-dtype") ? choice("exp-avg-sq-dtype", moments) : "fp32";
  if (!has("use-precision-aware-optimizer")) {
    if (has("main-params-dtype") || has("exp-avg-dtype") || has("exp-avg-sq-dtype"))
      note(
          "--main-params-dtype / --exp-avg-dtype / --exp-avg-sq-dtype do nothing without "
          "--use-precision-aware-optimizer: the optimizer keeps fp32 main weights and moments");
    return;
  }
  bool delayed_or_no_fp8 = !has("fp8-format") || !has("fp8-recipe") || *args_["fp8-recipe"] == "delayed";
  if (main == "fp32" && has("bf16") && delayed_or_no_fp8) {
    main = "fp32_remainders";
    note(
        "--use-precision-aware-optimizer with bf16 weights: the fp32 main weights are kept as their 16 low "
        "bits (Megatron-Core's store_param_remainders, on by default with Transformer Engine >= 2.1): "
        "training.main_params: fp32_remainders");
  }
  set("training.main_params", main);
  set("training.exp_avg_precision", exp_avg);
  set("training.exp_avg_sq_precision", exp_avg_sq);
}

void MegatronMapper::precision() {
  // fp8 / fp4 are GEMM formats beside --bf16 (which Megatron requires with them): the format wins.
  bool bf16 = has("bf16"), fp16 = has("fp16");
  if (has("fp4-format")) {
    word("fp4-format");
    auto recipe = word("fp4-recipe").value_or("nvfp4");
    if (recipe != "nvfp4")
      throw InputError(fmt::format("{}: --fp4-recipe {}: podsim reads nvfp4", source_, recipe));
    set("training.precision", "nvfp4");
  } else if (has("fp8-format")) {
    word("fp8-format");
    std::string p =
        has("fp8-recipe")
            ? choice(
                  "fp8-recipe",
                  {{"delayed", "fp8"}, {"tensorwise", "fp8"}, {"blockwise", "fp8_block"}, {"mxfp8", "mxfp8"}})
            : "fp8";
    set("training.precision", p);
    // Megatron-Core's delayed (its default) and tensorwise recipes are TE's DelayedScaling and
    // Float8CurrentScaling of the one per-tensor format.
    if (p == "fp8")
      set("training.fp8_recipe",
          has("fp8-recipe") && *args_["fp8-recipe"] == "tensorwise" ? "current" : "delayed");
  } else if (bf16) {
    set("training.precision", "bf16");
  } else if (fp16) {
    set("training.precision", "fp16");
  } else {
    note(
        "no --bf16, --fp16 or --fp8-format (Megatron-LM would train in fp32): training.precision stays the "
        "workload's");
  }
}

void MegatronMapper::leftovers() {
  std::string ignored, not_modelled, unknown;
  auto add = [](std::string& list, const std::string& name) {
    list += (list.empty() ? "--" : ", --") + name;
  };
  std::set<std::string> listed;
  for (const auto& [name, value] : cl_.args) {
    if (used_.count(name) || !listed.insert(name).second) continue;
    switch (classify_megatron_arg(name)) {
      case MegatronArgKind::ignored: add(ignored, name); break;
      case MegatronArgKind::not_modelled: add(not_modelled, name); break;
      case MegatronArgKind::unknown: add(unknown, name); break;
    }
  }
  if (!ignored.empty()) note("ignored (they do not change a step's time or memory): " + ignored);
  if (!not_modelled.empty())
    warn("Megatron-LM arguments podsim does not model (their effect is missing): " + not_modelled);
  if (!unknown.empty()) warn("arguments podsim does not understand (not applied): " + unknown);
  if (!cl_.stray.empty()) {
    std::string words;
    for (const auto& w : cl_.stray) words += (words.empty() ? "" : " ") + w;
    warn("words that are no --argument or value (not applied): " + words);
  }
  if (!cl_.launcher.empty()) {
    std::string words;
    for (const auto& w : cl_.launcher) words += (words.empty() ? "" : " ") + w;
    note(fmt::format("launcher before {} ignored ({}): the topology decides the devices, dp: auto uses them",
                     cl_.script, words));
  }
}

}  // namespace

JobImport parse_megatron_args(const std::string& command_line, const std::string& source) {
  return MegatronMapper(parse_megatron_command_line(command_line), source).map();
}

JobImport read_megatron_args(const std::string& text) {
  if (!text.empty() && text[0] == '@')
    return parse_megatron_args(read_text_file(text.substr(1)), text.substr(1));
  return parse_megatron_args(text, "--megatron-args");
}

}  // namespace podsim::driver
