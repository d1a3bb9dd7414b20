#include "megatron_cmdline.hpp"

#include <fmt/format.h>

#include <array>
#include <string_view>

#include "podsim/core/error.hpp"

namespace podsim::driver {
namespace {

std::vector<std::string> shell_words(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      if (text[i + 1] == '\n' || (text[i + 1] == '\r' && i + 2 < text.size() && text[i + 2] == '\n')) {
        i += text[i + 1] == '\r' ? 2 : 1;  // a continued line
        continue;
      }
      word += text[++i], in_word = true;
    } else if (c == '\'' || c == '"') {
      size_t end = text.find(c, i + 1);
      if (end == std::string::npos)
        throw InputError(fmt::format("--megatron-args: unterminated {} quote at character {}", c, i + 1));
      word += text.substr(i + 1, end - i - 1), in_word = true, i = end;
    } else if (c == '#' && !in_word) {
      size_t end = text.find('\n', i);
      i = end == std::string::npos ? text.size() : end;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(word);
      word.clear(), in_word = false;
    } else {
      word += c, in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

// Megatron-LM's store_true arguments among those podsim reads or lists: they never take the next word.
bool is_flag(const std::string& name) {
  static constexpr std::string_view flags[] = {"swiglu",
                                               "squared-relu",
                                               "group-query-attention",
                                               "untie-embeddings-and-output-weights",
                                               "disable-bias-linear",
                                               "add-bias-linear",
                                               "use-rotary-position-embeddings",
                                               "multi-latent-attention",
                                               "qk-layernorm",
                                               "moe-shared-expert-overlap",
                                               "overlap-moe-expert-parallel-comm",
                                               "moe-grouped-gemm",
                                               "moe-permute-fusion",
                                               "sequence-parallel",
                                               "use-distributed-optimizer",
                                               "use-megatron-fsdp",
                                               "use-torch-fsdp2",
                                               "torch-fsdp2-no-reshard-after-forward",
                                               "overlap-grad-reduce",
                                               "overlap-param-gather",
                                               "no-overlap-p2p-communication",
                                               "tp-comm-overlap",
                                               "account-for-embedding-in-pipeline-split",
                                               "account-for-loss-in-pipeline-split",
                                               "use-tp-pp-dp-mapping",
                                               "bf16",
                                               "fp16",
                                               "no-gradient-accumulation-fusion",
                                               "accumulate-allreduce-grads-in-fp32",
                                               "grad-reduce-in-bf16",
                                               "use-flash-attn",
                                               "use-mcore-models",
                                               "cross-entropy-loss-fusion",
                                               "fp8-param-gather",
                                               "mock-data",
                                               "manual-gc",
                                               "apply-layernorm-1p",
                                               "calculate-per-token-loss"};
  for (std::string_view f : flags)
    if (name == f) return true;
  return false;
}

bool ends_with(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

MegatronCommandLine parse_megatron_command_line(const std::string& text) {
  MegatronCommandLine cl;
  auto words = shell_words(text);
  size_t start = 0;
  for (size_t i = 0; i < words.size(); ++i)
    if (ends_with(words[i], ".py")) {
      cl.launcher.assign(words.begin(), words.begin() + static_cast<long>(i));
      cl.script = words[i];
      start = i + 1;
      break;
    }
  for (size_t i = start; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.rfind("--", 0) != 0 || w.size() == 2) {
      cl.stray.push_back(w);
      continue;
    }
    std::string name = w.substr(2);
    // "--fp8-format hybrid" quoted as one word (a bash array element written that way) is two.
    if (auto space = name.find(' '); space != std::string::npos && name.find('=') == std::string::npos)
      name[space] = '=';
    if (auto eq = name.find('='); eq != std::string::npos) {
      cl.args.emplace_back(name.substr(0, eq), name.substr(eq + 1));
    } else if (name == "recompute-modules") {
      // argparse nargs='*': every word up to the next option, kept as one space-separated value.
      std::string value;
      while (i + 1 < words.size() && words[i + 1].rfind("--", 0) != 0)
        value += (value.empty() ? "" : " ") + words[++i];
      cl.args.emplace_back(name, value);
    } else if (!is_flag(name) && i + 1 < words.size() && words[i + 1].rfind("--", 0) != 0) {
      cl.args.emplace_back(name, words[++i]);
    } else {
      cl.args.emplace_back(name, std::nullopt);
    }
  }
  return cl;
}

namespace {
// Megatron-LM's argument names (megatron/training/arguments.py and the TransformerConfig / TrainingConfig
// fields it turns into arguments, github NVIDIA/Megatron-LM @ d98e8a6). Prefixes end in '-'.
constexpr std::string_view kIgnored[] = {"lr",
                                         "min-lr",
                                         "lr-",
                                         "adam-",
                                         "sgd-",
                                         "weight-decay",
                                         "start-weight-decay",
                                         "end-weight-decay",
                                         "clip-grad",
                                         "init-method-",
                                         "seed",
                                         "train-iters",
                                         "train-samples",
                                         "exit-",
                                         "save",
                                         "load",
                                         "save-interval",
                                         "no-save-",
                                         "no-load-",
                                         "ckpt-",
                                         "use-dist-ckpt",
                                         "async-save",
                                         "finetune",
                                         "pretrained-checkpoint",
                                         "data-path",
                                         "data-cache-path",
                                         "train-data-path",
                                         "valid-data-path",
                                         "test-data-path",
                                         "split",
                                         "mock-data",
                                         "num-workers",
                                         "dataloader-type",
                                         "tokenizer-",
                                         "vocab-file",
                                         "merge-file",
                                         "eval-",
                                         "log-",
                                         "tensorboard-",
                                         "wandb-",
                                         "timing-log-",
                                         "distributed-backend",
                                         "distributed-timeout-minutes",
                                         "use-mcore-models",
                                         "transformer-impl",
                                         "norm-epsilon",
                                         "rotary-base",
                                         "rotary-percent",
                                         "rope-scaling-factor",
                                         "use-rope-scaling",
                                         "apply-layernorm-1p",
                                         "attention-softmax-in-fp32",
                                         "moe-aux-loss-coeff",
                                         "moe-z-loss-coeff",
                                         "moe-router-load-balancing-type",
                                         "moe-router-topk-scaling-factor",
                                         "moe-router-enable-expert-bias",
                                         "moe-router-bias-update-rate",
                                         "moe-router-num-groups",
                                         "moe-router-group-topk",
                                         "moe-router-pre-softmax",
                                         "loss-scale",
                                         "initial-loss-scale",
                                         "min-loss-scale",
                                         "hysteresis",
                                         "manual-gc",
                                         "decoupled-",
                                         "calculate-per-token-loss",
                                         "tiktoken-",
                                         "no-create-attention-mask-in-dataloader",
                                         "no-mmap-bin-files",
                                         "use-flash-attn-",
                                         "micro-batch-size-"};
constexpr std::string_view kNotModelled[] = {"moe-grouped-gemm",
                                             "moe-permute-fusion",
                                             "moe-router-fusion",
                                             "moe-layer-recompute",
                                             "moe-router-dtype",
                                             "moe-token-drop-policy",
                                             "moe-pad-expert-input-to-capacity",
                                             "no-bias-swiglu-fusion",
                                             "no-bias-gelu-fusion",
                                             "no-bias-dropout-fusion",
                                             "no-masked-softmax-fusion",
                                             "no-rope-fusion",
                                             "no-persist-layer-norm",
                                             "fp8-amax-",
                                             "fp8-param-gather",
                                             "fp8-margin",
                                             "decoder-first-pipeline-num-layers",
                                             "decoder-last-pipeline-num-layers",
                                             "tp-comm-overlap-cfg",
                                             "defer-embedding-wgrad-compute",
                                             "delay-wgrad-compute",
                                             "cpu-offloading",
                                             "ddp-bucket-size",
                                             "main-grads-dtype",
                                             "step-batch-size-schedule",
                                             "rampup-batch-size",
                                             "num-distributed-optimizer-instances",
                                             "empty-unused-memory-level"};
}  // namespace

MegatronArgKind classify_megatron_arg(const std::string& name) {
  auto match = [&](auto& list) {
    for (std::string_view p : list)
      if (p.back() == '-' ? name.rfind(p, 0) == 0 : name == p) return true;
    return false;
  };
  if (match(kIgnored)) return MegatronArgKind::ignored;
  if (match(kNotModelled)) return MegatronArgKind::not_modelled;
  return MegatronArgKind::unknown;
}

}  // namespace podsim::driver
