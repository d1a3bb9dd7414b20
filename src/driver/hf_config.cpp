// HuggingFace config.json -> transformer_lm overrides (hf_config.hpp). The field names are those of the
// transformers configuration classes (LlamaConfig, MistralConfig, MixtralConfig, Qwen2/3(Moe)Config,
// DeepseekV3Config, GPT2Config); hf_config_fields.cpp holds the lists of fields that need no reading and
// of layer structures podsim cannot represent.
#include "podsim/driver/hf_config.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>

#include "hf_config_fields.hpp"
#include "podsim/core/error.hpp"
#include "podsim/core/text_input.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"

namespace podsim::driver {
namespace {

using nlohmann::json;

class HfReader {
 public:
  HfReader(const json& c, std::string file) : c_(c), file_(std::move(file)) {}

  JobImport read() {
    hf_fields::reject_unrepresentable(c_, file_);
    model_type_ = text("model_type").value_or("");
    if (c_.contains("architectures") && c_["architectures"].is_array() && !c_["architectures"].empty())
      architecture_ = c_["architectures"][0].is_string() ? c_["architectures"][0].get<std::string>() : "";
    used_.insert("architectures");
    if (!hf_fields::checked_architecture(model_type_))
      out_.warnings.push_back(
          fmt::format("{}: model_type '{}' is not one this reader was checked against "
                      "(llama, mistral, mixtral, qwen2/3 and their MoE, deepseek_v2/v3, "
                      "gemma, gpt2): check the overrides it printed",
                      file_, model_type_));
    name();
    shape();
    mlp_and_norm();
    attention();
    sliding_window();
    moe();
    hf_fields::warn_unrepresentable(c_, file_, model_type_, out_);
    leftovers();
    return std::move(out_);
  }

 private:
  const json* field(const std::string& key) {
    used_.insert(key);
    auto it = c_.find(key);
    return it == c_.end() || it->is_null() ? nullptr : &*it;
  }
  [[noreturn]] void fail(const std::string& key, const json& v, const std::string& want) const {
    throw InputError(fmt::format("{}: field '{}' is {}, expected {}", file_, key, v.dump(), want));
  }
  std::optional<long long> integer(const std::string& key, long long min = 1) {
    const json* v = field(key);
    if (!v) return std::nullopt;
    if (!v->is_number_integer() || v->get<long long>() < min)
      fail(key, *v, fmt::format("an integer >= {}", min));
    return v->get<long long>();
  }
  std::optional<double> number(const std::string& key) {
    const json* v = field(key);
    if (!v) return std::nullopt;
    if (!v->is_number() || v->get<double>() < 0) fail(key, *v, "a number >= 0");
    return v->get<double>();
  }
  std::optional<std::string> text(const std::string& key) {
    const json* v = field(key);
    if (!v) return std::nullopt;
    if (!v->is_string()) fail(key, *v, "a string");
    return v->get<std::string>();
  }
  std::optional<bool> boolean(const std::string& key) {
    const json* v = field(key);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) fail(key, *v, "true or false");
    return v->get<bool>();
  }
  void set(const std::string& key, const std::string& value) {
    out_.sets.push_back(fmt::format("workload.{}={}", key, value));
  }
  void set(const std::string& key, long long value) { set(key, std::to_string(value)); }
  // The first of several spellings of one field (HF's names, then GPT-2's).
  std::optional<long long> integer_of(std::initializer_list<const char*> keys, long long min = 1) {
    std::optional<long long> v;
    for (const char* k : keys)
      if (auto x = integer(k, min); x && !v) v = x;
    return v;
  }

  void name() {
    used_.insert("_name_or_path");
    std::string n = c_.contains("_name_or_path") && c_["_name_or_path"].is_string()
                        ? c_["_name_or_path"].get<std::string>()
                        : architecture_;
    if (!n.empty() && n.find_first_of(":#{}[]\n'\"") == std::string::npos) set("name", n);
  }

  void shape() {
    auto layers = integer_of({"num_hidden_layers", "n_layer"});
    auto hidden = integer_of({"hidden_size", "n_embd"});
    auto heads = integer_of({"num_attention_heads", "n_head"});
    if (!layers || !hidden || !heads)
      throw InputError(
          fmt::format("{}: not a decoder-only transformer config: needs num_hidden_layers, "
                      "hidden_size and num_attention_heads (or GPT-2's n_layer, n_embd, n_head)",
                      file_));
    set("model.layers", *layers);
    layers_ = *layers;
    set("model.hidden", *hidden);
    set("model.heads", *heads);
    if (auto ffn = integer_of({"intermediate_size", "n_inner"})) set("model.ffn_hidden", *ffn);
    if (auto v = integer("vocab_size")) set("model.vocab", *v);
    if (auto mtp = integer("num_nextn_predict_layers", 0); mtp && *mtp > 0) set("model.mtp_layers", *mtp);
    for (const char* k : {"max_position_embeddings", "n_positions"})
      if (auto p = integer(k))
        out_.notes.push_back(fmt::format(
            "{}: {} {} is the longest context the model accepts, not the training sequence length; "
            "model.seq_len stays the workload's (set it with --set workload.model.seq_len=N)",
            file_, k, *p));
    dropout();
  }

  void dropout() {
    auto attn = number("attention_dropout");
    if (!attn) attn = number("attn_pdrop");
    auto hidden = number("resid_pdrop");
    number("embd_pdrop");
    auto p = hidden ? hidden : attn;
    if (!p) return;
    if (attn && hidden && *attn != *hidden)
      out_.warnings.push_back(
          fmt::format("{}: attention dropout {} and hidden dropout {} differ; podsim has "
                      "one model.dropout (its masks in activation memory and its kernels): took {}",
                      file_, *attn, *hidden, *p));
    set("model.dropout", fmt::format("{}", *p));
  }

  void mlp_and_norm() {
    std::string act = text("hidden_act").value_or(text("activation_function").value_or(""));
    text("hidden_activation");  // Gemma's name; gated GELU there
    bool gated = hf_fields::gated_mlp(model_type_, act);
    if (act == "relu2")
      set("model.mlp", "squared_relu");
    else if (gated)
      set("model.mlp", "swiglu");
    else if (act.rfind("gelu", 0) == 0)
      set("model.mlp", "gelu");
    else if (!act.empty())
      throw InputError(
          fmt::format("{}: hidden_act '{}' (model_type '{}'): podsim's MLPs are gelu, swiglu "
                      "(gated SiLU) and squared_relu",
                      file_, act, model_type_));
    if (gated && act.rfind("gelu", 0) == 0)
      out_.warnings.push_back(
          fmt::format("{}: hidden_act {} in a gated MLP (GeGLU) is costed as swiglu: the "
                      "same three matrices, the activation's few element-wise FLOPs differ",
                      file_, act));
    bool rms = number("rms_norm_eps").has_value();
    bool ln = number("layer_norm_epsilon") || number("layer_norm_eps") || number("norm_epsilon");
    if (rms)
      set("model.norm", "rmsnorm");
    else if (ln)
      set("model.norm", "layernorm");
    else
      out_.notes.push_back(
          fmt::format("{}: no rms_norm_eps or layer_norm_epsilon: model.norm stays the "
                      "workload's",
                      file_));
    bool gpt2 = model_type_ == "gpt2";
    bool tied = boolean("tie_word_embeddings").value_or(gpt2);
    if (!c_.contains("tie_word_embeddings"))
      out_.notes.push_back(fmt::format("{}: no tie_word_embeddings: took {} ({})", file_, tied,
                                       gpt2 ? "GPT2Config's default" : "the Llama-family configs' default"));
    set("model.tied_embeddings", tied ? "true" : "false");
    set("model.position_embedding", gpt2 ? "learned" : "rope");
    bool bias = boolean("attention_bias").value_or(gpt2) || boolean("mlp_bias").value_or(gpt2);
    set("model.linear_bias", bias ? "true" : "false");
  }

  void attention() {
    if (integer("kv_lora_rank")) {  // DeepSeek multi-head latent attention
      set("model.attention", "mla");
      set("model.q_lora_rank", integer("q_lora_rank").value_or(0));
      set("model.kv_lora_rank", *integer("kv_lora_rank"));
      for (const char* k : {"qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"}) {
        auto v = integer(k);
        if (!v) throw InputError(fmt::format("{}: kv_lora_rank (MLA) needs {} as well", file_, k));
        set(std::string("model.") + k, *v);
      }
      integer("num_key_value_heads");
      integer("head_dim");  // MLA's heads are described by the fields above (mla_config.cpp)
      return;
    }
    if (auto kv = integer("num_key_value_heads")) set("model.kv_heads", *kv);
    if (auto d = integer("head_dim")) set("model.head_dim", *d);
  }

  // Sliding-window attention: the window (HF sliding_window: keys a query sees, itself included) and
  // which layers use it: layer_types ("sliding_attention" / "full_attention"; GPT-OSS, newer Mistral,
  // Gemma 3), Gemma 3's sliding_window_pattern, Gemma 2's alternation (even layers sliding), or every
  // layer (Mistral 7B). Qwen2's max_window_layers split and chunked attention (Llama 4) are not modelled.
  void sliding_window() {
    auto window = integer("sliding_window");
    auto use = boolean("use_sliding_window");
    auto period = integer("sliding_window_pattern");
    const json* types = field("layer_types");
    integer("max_window_layers", 0);
    std::vector<bool> windowed;
    bool chunked = false;
    if (types && types->is_array()) {
      for (const auto& t : *types) {
        if (!t.is_string()) fail("layer_types", *types, "a list of layer type names");
        windowed.push_back(t == "sliding_attention");
        chunked |= t != "sliding_attention" && t != "full_attention";
      }
    } else if (period) {
      for (long long i = 0; i < layers_; ++i) windowed.push_back((i + 1) % *period != 0);
    } else if (model_type_ == "gemma2") {
      for (long long i = 0; i < layers_; ++i) windowed.push_back(i % 2 == 0);
    } else {
      windowed.assign(static_cast<size_t>(layers_), true);
    }
    if (chunked)
      out_.warnings.push_back(
          fmt::format("{}: layer_types name layers other than sliding_attention and "
                      "full_attention (chunked attention): costed as full attention",
                      file_));
    if (!window || (use && !*use)) return;
    if (model_type_.rfind("qwen2", 0) == 0) {
      out_.warnings.push_back(
          fmt::format("{}: use_sliding_window with max_window_layers (Qwen2): not modelled, every layer "
                      "costed with full causal attention",
                      file_));
      return;
    }
    auto every = workload::full_attention_every_of(windowed);
    if (!every) {
      out_.warnings.push_back(fmt::format(
          "{}: the sliding / full layer pattern repeats with no fixed period (model.full_attention_every "
          "cannot say it): every layer costed with full causal attention",
          file_));
      return;
    }
    set("model.sliding_window", *window);
    if (*every > 0) set("model.full_attention_every", *every);
  }

  void moe() {
    auto experts = integer_of({"num_local_experts", "num_experts", "n_routed_experts"}, 0);
    auto top_k = integer("num_experts_per_tok");
    if (!experts || *experts == 0) return;
    if (!top_k) throw InputError(fmt::format("{}: {} experts but no num_experts_per_tok", file_, *experts));
    set("moe.experts", *experts);
    set("moe.top_k", *top_k);
    auto ffn = integer("moe_intermediate_size");
    if (!ffn) ffn = integer_of({"intermediate_size"});  // Mixtral: intermediate_size is the expert's
    if (ffn) set("moe.ffn_hidden", *ffn);
    if (auto shared = integer("n_shared_experts", 0); shared && *shared > 0) {
      set("moe.shared_experts", *shared);
      if (ffn) set("moe.shared_ffn_hidden", *ffn);
    }
    if (auto shared_ffn = integer("shared_expert_intermediate_size", 0); shared_ffn && *shared_ffn > 0) {
      set("moe.shared_experts", 1);  // Qwen2-MoE: one shared expert of that width
      set("moe.shared_ffn_hidden", *shared_ffn);
    }
    auto groups = integer("n_group", 0), chosen = integer("topk_group", 0);  // group-limited routing
    if (groups && *groups > 1) {
      set("moe.router_groups", *groups);
      if (chosen && *chosen > 0) set("moe.router_group_topk", *chosen);
    }
    if (auto k = integer("first_k_dense_replace", 0); k && *k > 0) set("moe.first_dense_layers", *k);
    if (auto f = integer("moe_layer_freq"); f && *f > 1) set("moe.layer_freq", *f);
    if (auto s = text("scoring_func")) {
      if (*s != "sigmoid" && *s != "softmax")
        throw InputError(
            fmt::format("{}: scoring_func '{}': podsim's routers are softmax and sigmoid", file_, *s));
      set("moe.router", *s);
    }
  }

  void leftovers() {
    std::vector<std::string> unknown;
    for (const auto& [key, value] : c_.items())
      if (!used_.count(key) && !hf_fields::needs_no_reading(key)) unknown.push_back(key);
    if (unknown.empty()) return;
    std::string list;
    for (const auto& k : unknown) list += (list.empty() ? "" : ", ") + k;
    out_.warnings.push_back(
        fmt::format("{}: fields podsim does not read (check that none changes the model's "
                    "shape): {}",
                    file_, list));
  }

  const json& c_;
  long long layers_ = 0;
  std::string file_, model_type_, architecture_;
  std::set<std::string> used_;
  JobImport out_;
};

}  // namespace

JobImport parse_hf_config(const std::string& json_text, const std::string& file) {
  json c;
  try {
    c = json::parse(json_text);
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("{}: not a JSON file ({})", file, e.what()));
  }
  if (!c.is_object()) throw InputError(fmt::format("{}: expected a JSON object (a config.json)", file));
  // Multimodal configs (Llava, Gemma 3, Llama 4) nest the language model's config.
  if (!c.contains("num_hidden_layers") && c.contains("text_config") && c["text_config"].is_object()) {
    JobImport out = HfReader(c["text_config"], file + " text_config").read();
    out.notes.push_back(
        fmt::format("{}: read text_config, the language model; other towers are not "
                    "simulated",
                    file));
    return out;
  }
  return HfReader(c, file).read();
}

JobImport read_hf_config(const std::string& path) {
  return parse_hf_config(read_text_file(path), path);
}

}  // namespace podsim::driver
