// Typed workload description: a transformer language model, how it is parallelized, how it is trained.
// These are the YAML keys of the CLI contract (model.*, parallel.*, training.*).
#pragma once

#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "podsim/topology/device_spec.hpp"
#include "podsim/workload/parallel_layout.hpp"
#include "podsim/workload/pipeline_schedule.hpp"
#include "podsim/workload/transformer/moe_config.hpp"
#include "podsim/workload/transformer/tp_overlap.hpp"

namespace podsim {
class ConfigNode;
}

namespace podsim::workload {

// The MLP of a layer: GPT's GeLU (fc1, fc2), Llama's SwiGLU (gate and up projections, fused into one fc1 of
// width 2f in Megatron-Core, then fc2: three h x f matrices), Nemotron's squared ReLU (two matrices).
enum class Mlp { gelu, swiglu, squared_relu };
inline constexpr auto kMlpNames =
    name_table<Mlp>({{Mlp::gelu, "gelu"}, {Mlp::swiglu, "swiglu"}, {Mlp::squared_relu, "squared_relu"}});
enum class Norm { layernorm, rmsnorm };  // LayerNorm has a scale and a bias (2h), RMSNorm a scale (h)
inline constexpr auto kNormNames =
    name_table<Norm>({{Norm::layernorm, "layernorm"}, {Norm::rmsnorm, "rmsnorm"}});
enum class PositionEmbedding { learned, rope };  // learned: a seq_len x h table; rope: no parameters
inline constexpr auto kPositionEmbeddingNames = name_table<PositionEmbedding>(
    {{PositionEmbedding::learned, "learned"}, {PositionEmbedding::rope, "rope"}});

// The attention block: multi-head attention (grouped-query attention is mha with kv_heads) or DeepSeek's
// multi-head latent attention (DeepSeek-V2, arXiv 2405.04434, Sec. 2.1): queries and keys/values go through
// low-rank latents, each head's key has a decoupled RoPE part (mla_math.hpp, mla_ops.hpp).
enum class AttentionType { mha, mla };
inline constexpr auto kAttentionTypeNames =
    name_table<AttentionType>({{AttentionType::mha, "mha"}, {AttentionType::mla, "mla"}});

struct ModelConfig {
  std::string name;
  long long layers = 0, hidden = 0, heads = 0, ffn_hidden = 0, seq_len = 0, vocab = 0;
  // Grouped-query attention: key/value heads (query groups); 0 = heads (multi-head attention). head_dim
  // 0 = hidden/heads. read_model_section fills both; query_groups() / dim() read them either way.
  long long kv_heads = 0, head_dim = 0;
  Mlp mlp = Mlp::gelu;
  Norm norm = Norm::layernorm;
  bool tied_embeddings = true;  // output layer shares the word embedding (GPT); Llama has its own
  PositionEmbedding position_embedding = PositionEmbedding::learned;
  bool linear_bias = true;  // biases on every linear layer (GPT-3); Llama and Nemotron have none
  // Hidden and attention dropout probability (Megatron-Core's default 0.1; NeMo's Llama and Nemotron
  // configs set 0). At 0 no dropout mask is kept for the backward (torch's dropout returns its input).
  double dropout = 0.1;
  // model.attention and the MLA dimensions (read by read_mla_keys, mla_config.cpp): q_lora_rank 0 = queries
  // not compressed; the qk head is qk_nope_head_dim + qk_rope_head_dim wide, the value head v_head_dim.
  AttentionType attention_type = AttentionType::mha;
  long long q_lora_rank = 0, kv_lora_rank = 0, qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
  int mtp_layers = 0;  // DeepSeek-V3 multi-token prediction modules on the last stage (0 = none)
  // Sliding-window (local) attention: each query sees itself and the sliding_window - 1 keys before it
  // (HF `sliding_window`; Megatron-Core window_size (W-1, 0)); 0 = every layer attends the whole causal
  // prefix. full_attention_every N (Megatron-Core window_attn_skip_freq): layers N, 2N, ... (1-based)
  // keep full attention, the others use the window; 0 = every layer uses it (Mistral 7B).
  long long sliding_window = 0;
  int full_attention_every = 0;

  long long query_groups() const { return kv_heads > 0 ? kv_heads : heads; }
  long long dim() const { return head_dim > 0 ? head_dim : (heads > 0 ? hidden / heads : 0); }
};

enum class Recompute { none, selective, full };
inline constexpr auto kRecomputeNames = name_table<Recompute>(
    {{Recompute::none, "none"}, {Recompute::selective, "selective"}, {Recompute::full, "full"}});
// How weight gradients of successive microbatches are summed: into an fp32 main_grad buffer by a separate
// kernel (Megatron's local DDP), in place in the parameter's precision (PyTorch DDP), or inside the weight-
// gradient GEMM (Megatron's gradient_accumulation_fusion).
enum class GradAccumulation { fp32, same, fused };
inline constexpr auto kGradAccumulationNames = name_table<GradAccumulation>(
    {{GradAccumulation::fp32, "fp32"}, {GradAccumulation::same, "same"}, {GradAccumulation::fused, "fused"}});

// What Adam keeps of the weights besides the copy the model computes with (optimizer_state.hpp): an fp32
// main copy (Megatron-Core's mixed-precision optimizer), only its 16 low bits (the bf16 weight is the high
// half: store_param_remainders of Transformer Engine's FusedAdam and Apex's DistributedFusedAdam), an fp16
// copy (--main-params-dtype fp16), or nothing (the optimizer updates the model's weights in place: fp32
// training, or Apex's DistributedFusedAdam with its state in the model's dtype).
enum class MainParams { fp32, fp32_remainders, fp16, none };
inline constexpr auto kMainParamsNames =
    name_table<MainParams>({{MainParams::fp32, "fp32"},
                            {MainParams::fp32_remainders, "fp32_remainders"},
                            {MainParams::fp16, "fp16"},
                            {MainParams::none, "none"}});
// The optimizer's state per parameter: its main weights and Adam's two moments (bytes per element of each:
// 4 fp32, 2 bf16 / fp16, 1 fp8), as training.main_params, training.exp_avg_precision and
// training.exp_avg_sq_precision set them.
struct OptimizerState {
  MainParams main_params = MainParams::fp32;
  double exp_avg_bytes = 4, exp_avg_sq_bytes = 4;
};

// How context parallelism moves keys and values between the ranks that split a sequence: Megatron-Core /
// Transformer Engine ring attention (KV blocks passed around the CP ring, overlapped with attention
// blocks), or the all-gather of K and V before attention that Llama 3 used (Llama 3 paper, Sec. 3.3.2).
enum class CpAlgorithm { ring, all_gather };
inline constexpr auto kCpAlgorithmNames =
    name_table<CpAlgorithm>({{CpAlgorithm::ring, "ring"}, {CpAlgorithm::all_gather, "all_gather"}});

// The order ranks are laid out in (parallel_layout.hpp): Megatron-Core's default, or stages before
// data-parallel replicas (Megatron-LM --use-tp-pp-dp-mapping; Llama 3's [TP, CP, PP, DP]).
enum class RankOrder { tp_cp_dp_pp, tp_cp_pp_dp };
inline constexpr auto kRankOrderNames =
    name_table<RankOrder>({{RankOrder::tp_cp_dp_pp, "tp-cp-dp-pp"}, {RankOrder::tp_cp_pp_dp, "tp-cp-pp-dp"}});

const char* to_string(Recompute r);
const char* to_string(RankOrder o);
const char* to_string(CpAlgorithm a);
const char* to_string(Mlp m);
const char* to_string(Norm n);
const char* to_string(GradAccumulation g);

struct ParallelConfig {
  int tp = 1, pp = 1, dp = 0;  // dp 0 = all remaining devices
  Schedule schedule = Schedule::one_f_one_b;
  int virtual_stages = 1;  // 0 = auto (fastest that fits)
  bool virtual_stages_auto = false;
  bool sequence_parallel = false;
  int zero = 0;         // ZeRO / FSDP stage 0..3
  int shard_group = 0;  // HSDP: ZeRO shards within groups of this many dp ranks (0 = all of dp)
  // ZeRO-3: free each gathered unit after its forward and gather it again for the backward (FSDP2's
  // reshard_after_forward, the default); false keeps the forward's gather for the backward (FSDP1's
  // SHARD_GRAD_OP): one gather per microbatch instead of two, every unit of the stage held gathered.
  bool reshard_after_forward = true;
  bool scatter_gather = true;  // Megatron's p2p scatter/gather across TP ranks
  // Megatron-Core's overlap_p2p_comm and overlap_p2p_comm_warmup_flush (pipeline_schedule.hpp
  // P2pOverlap): the interleaved schedule's receives posted one step early and waited just before their
  // consumer, in the steady state (and in the warm-up and flush). Only with virtual stages.
  bool overlap_p2p_comm = false, overlap_p2p_comm_warmup_flush = false;
  // Megatron-Core's microbatch_group_size_per_vp_stage: contiguous microbatches per chunk of the
  // interleaved schedule (0: pp, the default depth-first order; pipeline_schedule.hpp build_schedule).
  int microbatch_group = 0;
  bool dp_overlap = true;  // bucketed gradient all-reduce overlapped with the last backward
  double dp_bucket_bytes = 25e6;
  // dp_bucket_MB: megatron_core: buckets of max(40M, 1M x dp x cp) parameters, Megatron-Core's default
  // (DistributedDataParallelConfig.bucket_size: larger DP needs larger buckets, or the reductions become
  // latency-bound); dp_bucket_bytes is then unused.
  bool dp_bucket_megatron_core = false;
  std::string dp_algorithm = "ring";  // ring | tree | hierarchical
  int cp = 1;                         // context parallelism: ranks splitting each sequence
  CpAlgorithm cp_algorithm = CpAlgorithm::ring;
  RankOrder rank_order = RankOrder::tp_cp_dp_pp;
  bool tp_overlap = false;  // TP collectives overlapped with their GEMMs (Transformer Engine userbuffers)
  TpOverlapGemms tp_overlap_gemms = te_default_tp_overlap();  // how, per GEMM (tp_overlap.hpp)
  int ep = 1, etp = 1;  // expert (tensor) parallelism of the MoE layers (moe_config.hpp)
  // The embedding / the loss count as one layer slot of the first / last stage (pipeline_split.hpp).
  bool embedding_in_pipeline_split = false, loss_in_pipeline_split = false;
  // parallel.pipeline_layout (pipeline_layout.hpp): transformer layers per model chunk (entry c * pp + s),
  // one list per layout given; empty = the even split.
  std::vector<std::vector<int>> pipeline_layouts;
};

// The ranks' placement this configuration describes (parallel.rank_order included).
ParallelLayout rank_layout(const ParallelConfig& p);

// Why `microbatches` per replica do not fit the interleaved schedule's microbatch groups
// (interleaved_group_problem with pp and parallel.microbatch_group_size); empty when they do or when the
// schedule is not interleaved.
std::string interleaved_microbatch_problem(const ParallelConfig& p, long long microbatches);

// How the attention core runs: one fused kernel (FlashAttention-2/-3, cuDNN fused attention: causal
// blocks skipped, no s x s tensor in HBM, the backward recomputes the scores inside the kernel) or
// Megatron's unfused kernels (Q K^T, softmax, dropout, P V, with the s x s scores in HBM).
enum class Attention { flash, unfused };
inline constexpr auto kAttentionNames =
    name_table<Attention>({{Attention::flash, "flash"}, {Attention::unfused, "unfused"}});

// training.recompute_modules with recompute: selective (recompute_modules.hpp): which submodules
// Megatron-Core's selective recomputation redoes. The default is its default, ["core_attn"].
struct RecomputeModules {
  bool core_attn = true, mla_up_proj = false, mlp = false;
  bool moe_act = false, layernorm = false;  // MoE layers only (recompute_modules.hpp)
};

// training.fp8_fast_accumulation (gemm_accumulation.hpp): which passes' fp8 GEMMs use Hopper's fast
// accumulation; the others promote their partial sums to fp32 (the split accumulator). fprop is
// Transformer Engine's and torchao's choice.
enum class FastAccumulation { fprop, all, none };
inline constexpr auto kFastAccumulationNames = name_table<FastAccumulation>(
    {{FastAccumulation::fprop, "fprop"}, {FastAccumulation::all, "all"}, {FastAccumulation::none, "none"}});

// training.fp8_recipe: how Transformer Engine scales the per-tensor fp8 format (precision: fp8).
// delayed = DelayedScaling (scale from an amax history: TE's and Megatron-Core's default; the norm before a
// linear writes fp8 itself); current = Float8CurrentScaling (Megatron-Core --fp8-recipe tensorwise, the
// Megatron-Bridge FP8-CS configs: every quantization first reduces its input's amax).
enum class Fp8Recipe { delayed, current };
inline constexpr auto kFp8RecipeNames =
    name_table<Fp8Recipe>({{Fp8Recipe::delayed, "delayed"}, {Fp8Recipe::current, "current"}});
const char* to_string(Fp8Recipe r);

struct TrainingConfig {
  long long global_batch = 0;
  int micro_batch = 1;  // 0 = auto
  bool micro_batch_auto = false;
  topology::Precision precision = topology::Precision::bf16;
  Recompute recompute = Recompute::none;
  RecomputeModules recompute_modules;  // meaningful with recompute: selective
  // training.cross_entropy: fused = Transformer Engine's parallel_cross_entropy (Megatron-Core
  // cross_entropy_loss_fusion, cross_entropy_fusion_impl te): the backward keeps only the 16-bit logits
  // (it writes the gradient into them) and its kernels move 3 + 2 logits' worth of 16-bit bytes
  // (head_ops.cpp); unfused (default) keeps them plus the fp32 softmax and runs the fp32 passes.
  bool fused_cross_entropy = false;
  FastAccumulation fp8_fast_accumulation = FastAccumulation::fprop;
  Fp8Recipe fp8_recipe = Fp8Recipe::delayed;  // used with precision: fp8 only
  // Whether per-tensor fp8 GEMM operands need a transposed copy: Hopper's (and older) fp8 tensor cores
  // take only the TN layout, so Transformer Engine writes each tensor's transpose beside it for the
  // backward GEMMs; Blackwell's take any layout (TE's is_non_tn_fp8_gemm_supported, sm_100+). Resolved
  // from the topology's device.architecture (resolve_fp8_layout).
  bool fp8_transposed_copies = true;
  double grad_reduce_bytes = 2;  // bytes per gradient element in the data-parallel reduction
  GradAccumulation grad_accumulation = GradAccumulation::fp32;
  double main_grad_bytes = 4;  // bytes per gradient element held for accumulation
  Attention attention = Attention::unfused;
  bool attention_auto = true;  // `auto` (or absent): resolve_attention picks from the device
  // training.attention_library: which release of the fused attention kernel's library the device profile
  // describes it for ("latest", or a name under the profile's attention.releases; device_profile.hpp).
  std::string attention_library = "latest";
  OptimizerState optimizer;  // training.main_params, exp_avg_precision, exp_avg_sq_precision
};

struct WorkloadConfig {
  std::string name;
  std::string kind;  // "transformer_lm"
  std::string file;
  ModelConfig model;
  ParallelConfig parallel;
  TrainingConfig training;
  MoeConfig moe;  // disabled (experts 0) without a `moe:` section
  // What the reader accepted but the user should know ("file:line: key: ... unused"): the step plan
  // carries them to the summary and to result.json's notes; the reader prints nothing itself.
  std::vector<std::string> warnings;
};

// Stages before replicas with a moe: section where Megatron-Core refuses it: pp > 1 and ep x etp != tp x cp
// (its assertion that the expert and dense data-parallel sizes agree), which would lay an expert group
// over more than one stage of a replica.
bool rank_order_splits_expert_groups(const WorkloadConfig& w);

// Reads a transformer_lm workload (model, parallel, training sections). `devices` is the topology's
// device count, used to resolve dp: auto and to check that the job fits on the machine.
WorkloadConfig read_transformer_workload(const ConfigNode& root, int devices, int devices_per_node);

// Checks divisibility rules of Megatron-LM; throws InputError naming the field and valid values.
void validate_transformer_workload(const WorkloadConfig& w, const ConfigNode& root, int devices);

// Pieces of read_transformer_workload for readers of the same file on other machines
// (cerebras_config.hpp), so that a key is accepted or rejected alike wherever the file runs.
//
// The model section (every key of it; unknown keys are an error). The model is named `name`.
ModelConfig read_model_section(const ConfigNode& model, const std::string& name);
// training.precision, training.recompute, training.grad_reduce_precision (bytes per reduced gradient
// element for a run at `precision`) and training.grad_accumulation.
topology::Precision read_precision(const ConfigNode& train);
Recompute read_recompute(const ConfigNode& train);
// InputError at training.precision (file:line, the device, the precisions it has) when `device` has no
// peak for `precision`, so that `fp8` on an A100 is reported where it was written.
void check_precision_on_device(const ConfigNode& train, topology::Precision precision,
                               const topology::DeviceSpec& device, const std::string& topology_file);
// A warning for each key the file states explicitly that an override of a key it is derived from
// (hidden, heads) left inconsistent: e.g. --set model.hidden=6144 on a file with ffn_hidden: 49152.
std::vector<std::string> inconsistent_derived_keys(const ConfigNode& model, const ModelConfig& m);
// training.fp8_transposed_copies from the device: false on Blackwell, true otherwise (an unknown
// architecture is taken as Hopper-like, the conservative choice).
void resolve_fp8_layout(TrainingConfig& t, const topology::DeviceSpec& device);
// training.attention `auto` (the default): flash on Hopper and newer, as today's frameworks do, unfused
// before (so the A100 / V100 results of the SC21 era stay as they were). An explicit `flash` needs the
// device profile's fused-attention efficiencies (`attention:` section): InputError at training.attention
// otherwise.
void resolve_attention(const ConfigNode& train, TrainingConfig& t, const topology::DeviceSpec& device,
                       bool profile_has_fused_attention);
double read_grad_reduce_bytes(const ConfigNode& train, topology::Precision precision);
GradAccumulation read_grad_accumulation(const ConfigNode& train);

}  // namespace podsim::workload
