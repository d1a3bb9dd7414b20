// --megatron-args: a real Megatron-LM launch command (tests/data/megatron, from the repository's
// examples) gives the Llama 3 8B preset's model and its layout keys; every argument is applied, ignored
// with a note, or listed in a warning; bad values name the argument.
#include <gtest/gtest.h>

#include "podsim/core/config_node.hpp"
#include "podsim/driver/megatron_args.hpp"
#include "podsim/workload/transformer/pipeline_split.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"
#include "podsim/workload/transformer/transformer_math.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using namespace podsim::workload;
using podsim::testing::error_of;
using podsim::testing::source_path;

namespace {

// On 8 devices (the presets' dp: auto then fills one server; the MoE presets state their layouts).
WorkloadConfig with_overrides(const std::string& file, const std::vector<std::string>& sets,
                              int devices = 8) {
  ConfigNode root = ConfigNode::load_file(source_path(file));
  for (const auto& s : sets) {
    auto eq = s.find('=');
    root.apply_override(s.substr(9, eq - 9), s.substr(eq + 1), s);
  }
  return read_transformer_workload(root, devices, 8);
}

std::string joined(const std::vector<std::string>& lines) {
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  return all;
}

bool has_set(const driver::JobImport& imp, const std::string& set) {
  return std::find(imp.sets.begin(), imp.sets.end(), set) != imp.sets.end();
}

}  // namespace

TEST(MegatronArgs, Llama3ExampleGivesThePresetModel) {
  auto imp = driver::read_megatron_args("@" + source_path("tests/data/megatron/llama3-8b-h100-fp8.sh"));
  WorkloadConfig got = with_overrides("workloads/base-llm.yaml", imp.sets);
  WorkloadConfig want = with_overrides("workloads/llama3-8b.yaml", {}, 8);
  EXPECT_DOUBLE_EQ(total_params(got.model), total_params(want.model));
  EXPECT_EQ(got.model.kv_heads, 8);
  EXPECT_EQ(got.model.seq_len, 8192);  // --seq-length, not --max-position-embeddings
  EXPECT_EQ(got.training.global_batch, 128);
  EXPECT_EQ(got.training.micro_batch, 1);
  EXPECT_EQ(got.parallel.zero, 1);       // --use-distributed-optimizer
  EXPECT_TRUE(got.parallel.dp_overlap);  // --overlap-grad-reduce / --overlap-param-gather
  EXPECT_TRUE(got.parallel.sequence_parallel);
  EXPECT_EQ(got.training.precision, topology::Precision::fp8);  // --fp8-format hybrid (quoted as one word)
  for (const char* s : {"workload.training.grad_reduce_precision=bf16", "workload.training.attention=flash",
                        "workload.model.dropout=0"})
    EXPECT_TRUE(has_set(imp, s)) << s;
  std::string notes = joined(imp.notes), warnings = joined(imp.warnings);
  EXPECT_NE(notes.find("--lr"), std::string::npos) << notes;  // ignored, and said so
  EXPECT_NE(notes.find("launcher before pretrain_gpt.py"), std::string::npos) << notes;
  // --cross-entropy-loss-fusion without an impl: Megatron-Core's native fp32 version, costed unfused, said so
  EXPECT_TRUE(has_set(imp, "workload.training.cross_entropy=unfused"));
  EXPECT_EQ(warnings.find("--cross-entropy-loss-fusion"), std::string::npos) << warnings;
  EXPECT_NE(notes.find("--cross-entropy-loss-fusion with the native implementation"), std::string::npos)
      << notes;
  EXPECT_NE(warnings.find("--fp8-param-gather"), std::string::npos) << warnings;
  EXPECT_EQ(warnings.find("--bf16"), std::string::npos)
      << warnings;  // read: fp8 is the GEMM format beside it
}

TEST(MegatronArgs, CrossEntropyFusionImplementation) {
  auto sets = [](const std::string& args) { return driver::parse_megatron_args(args, "cmd"); };
  auto te = sets("--cross-entropy-loss-fusion --cross-entropy-fusion-impl te");
  EXPECT_TRUE(has_set(te, "workload.training.cross_entropy=fused"));
  EXPECT_TRUE(has_set(sets("--cross-entropy-fusion-impl native --cross-entropy-loss-fusion"),
                      "workload.training.cross_entropy=unfused"));
  auto alone = sets("--cross-entropy-fusion-impl te");  // no fusion: Megatron's plain loss
  EXPECT_TRUE(std::none_of(alone.sets.begin(), alone.sets.end(), [](const std::string& s) {
    return s.find("cross_entropy") != std::string::npos;
  }));
  EXPECT_NE(joined(alone.notes).find("does nothing"), std::string::npos);
  std::string e = error_of([&] { sets("--cross-entropy-loss-fusion --cross-entropy-fusion-impl triton"); });
  EXPECT_NE(e.find("cross-entropy-fusion-impl"), std::string::npos) << e;
  EXPECT_NE(e.find("te"), std::string::npos) << e;
}

TEST(MegatronArgs, ParallelLayoutAndVirtualStages) {
  auto imp = driver::parse_megatron_args(
      "--num-layers 96 --hidden-size 12288 --num-attention-heads 96 --tensor-model-parallel-size 8 "
      "--pipeline-model-parallel-size 16 --num-layers-per-virtual-pipeline-stage 2 --context-parallel-size 2 "
      "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1 "
      "--vocab-size 50257 --fp16 --use-megatron-fsdp --data-parallel-sharding-strategy optim_grads",
      "cmd");
  for (const char* s :
       {"workload.parallel.tp=8", "workload.parallel.pp=16", "workload.parallel.cp=2",
        "workload.parallel.schedule=interleaved", "workload.parallel.virtual_stages=3",
        "workload.parallel.overlap_p2p_comm=true",  // Megatron-LM's default with virtual stages
        "workload.training.recompute=full", "workload.training.precision=fp16", "workload.parallel.zero=2",
        // Megatron pads the vocabulary to a multiple of 128 x tp = 1024
        "workload.model.vocab=51200"})
    EXPECT_TRUE(has_set(imp, s)) << s << "\n" << joined(imp.sets);
  EXPECT_TRUE(imp.warnings.empty()) << joined(imp.warnings);
  // torch FSDP2 without resharding after the forward: ZeRO-3 keeping the gathered parameters; the flag
  // means nothing to Megatron-FSDP, which podsim says.
  auto fsdp2 = driver::parse_megatron_args(
      "--num-layers 8 --hidden-size 1024 --num-attention-heads 8 --use-torch-fsdp2 "
      "--torch-fsdp2-no-reshard-after-forward",
      "cmd");
  EXPECT_TRUE(has_set(fsdp2, "workload.parallel.zero=3")) << joined(fsdp2.sets);
  EXPECT_TRUE(has_set(fsdp2, "workload.parallel.reshard_after_forward=false")) << joined(fsdp2.sets);
  auto mfsdp = driver::parse_megatron_args(
      "--num-layers 8 --hidden-size 1024 --num-attention-heads 8 --use-megatron-fsdp "
      "--torch-fsdp2-no-reshard-after-forward",
      "cmd");
  EXPECT_FALSE(has_set(mfsdp, "workload.parallel.reshard_after_forward=false")) << joined(mfsdp.sets);
  EXPECT_NE(joined(mfsdp.notes).find("torch-fsdp2-no-reshard-after-forward ignored"), std::string::npos)
      << joined(mfsdp.notes);
  auto moe = driver::parse_megatron_args(
      "--num-experts 64 --moe-ffn-hidden-size 1408 --moe-layer-freq '([0]*1+[1]*27)' "
      "--moe-router-score-function sigmoid --moe-token-dispatcher-type alltoall --expert-model-parallel-size "
      "8 --moe-router-num-groups 8 --moe-router-group-topk 4",
      "cmd");
  for (const char* s :
       {"workload.moe.experts=64", "workload.moe.top_k=2", "workload.moe.ffn_hidden=1408",
        "workload.moe.first_dense_layers=1", "workload.moe.router=sigmoid", "workload.parallel.ep=8",
        "workload.moe.router_groups=8", "workload.moe.router_group_topk=4"})
    EXPECT_TRUE(has_set(moe, s)) << s << "\n" << joined(moe.sets);
  auto blocking = driver::parse_megatron_args(
      "--pipeline-model-parallel-size 4 --num-virtual-stages-per-pipeline-rank 2 "
      "--no-overlap-p2p-communication",
      "cmd");
  EXPECT_TRUE(has_set(blocking, "workload.parallel.overlap_p2p_comm=false")) << joined(blocking.sets);
  EXPECT_TRUE(blocking.warnings.empty()) << joined(blocking.warnings);
  auto grouped = driver::parse_megatron_args(
      "--pipeline-model-parallel-size 4 --num-virtual-stages-per-pipeline-rank 2 "
      "--microbatch-group-size-per-virtual-pipeline-stage 6",
      "cmd");
  EXPECT_TRUE(has_set(grouped, "workload.parallel.microbatch_group_size=6")) << joined(grouped.sets);
  auto mapped = driver::parse_megatron_args("--pipeline-model-parallel-size 4 --use-tp-pp-dp-mapping", "cmd");
  EXPECT_TRUE(has_set(mapped, "workload.parallel.rank_order=tp-cp-pp-dp")) << joined(mapped.sets);
  EXPECT_TRUE(mapped.warnings.empty()) << joined(mapped.warnings);
  EXPECT_TRUE(grouped.warnings.empty()) << joined(grouped.warnings);
  auto combined = driver::parse_megatron_args("--num-experts 8 --overlap-moe-expert-parallel-comm", "cmd");
  EXPECT_TRUE(has_set(combined, "workload.moe.overlap=combined_1f1b")) << joined(combined.sets);
  EXPECT_TRUE(combined.warnings.empty()) << joined(combined.warnings);
}

// DeepSeek-V3's 61 layers over pp 8 x vp 4 as NVIDIA's recipe lays them out: the layout string reaches
// parallel.pipeline_layout as written and places the preset's layers chunk by chunk.
TEST(MegatronArgs, PipelineLayoutAndRecomputeModulesAreApplied) {
  auto imp = driver::parse_megatron_args(
      "--pipeline-model-parallel-size 8 --num-virtual-stages-per-pipeline-rank 4 "
      "--pipeline-model-parallel-layout 'Et|(tt|)*30mL'",
      "cmd");
  EXPECT_TRUE(has_set(imp, "workload.parallel.pipeline_layout=Et|(tt|)*30mL")) << joined(imp.sets);
  EXPECT_TRUE(imp.warnings.empty()) << joined(imp.warnings);
  WorkloadConfig w = with_overrides("workloads/deepseek-v3.yaml", imp.sets, 1024);
  EXPECT_EQ(w.parallel.virtual_stages, 4);
  EXPECT_EQ(chunk_layers(w, 4, 0, 0), 1);  // E t
  EXPECT_EQ(chunk_layers(w, 4, 1, 0), 2);  // t t
  EXPECT_EQ(chunk_layers(w, 4, 7, 3), 0);  // m L: the MTP module and the loss only
  // --recompute-modules takes every word up to the next option (argparse nargs='*').
  auto rec = driver::parse_megatron_args(
      "--recompute-granularity selective --recompute-modules mla_up_proj mlp --micro-batch-size 1", "cmd");
  EXPECT_TRUE(has_set(rec, "workload.training.recompute_modules=[mla_up_proj, mlp]")) << joined(rec.sets);
  EXPECT_TRUE(has_set(rec, "workload.training.micro_batch=1")) << joined(rec.sets);
  EXPECT_TRUE(rec.warnings.empty()) << joined(rec.warnings);
  WorkloadConfig r = with_overrides("workloads/deepseek-v3.yaml", rec.sets, 1024);
  EXPECT_TRUE(r.training.recompute_modules.mla_up_proj);
  EXPECT_TRUE(r.training.recompute_modules.mlp);
  EXPECT_FALSE(r.training.recompute_modules.core_attn);  // a given list replaces the default
}

TEST(MegatronArgs, UnknownAndUnmodelledArgumentsAreListed) {
  auto imp = driver::parse_megatron_args(
      "--num-layers 2 --hiden-size 64 --recompute-granularity full --recompute-method block "
      "--recompute-num-layers 4 --moe-grouped-gemm stray --bf16",
      "cmd");
  std::string w = joined(imp.warnings);
  EXPECT_NE(w.find("does not understand (not applied): --hiden-size"), std::string::npos) << w;
  EXPECT_NE(w.find("--recompute-method block --recompute-num-layers 4"), std::string::npos) << w;
  EXPECT_NE(w.find("stray"), std::string::npos) << w;
  // --num-query-groups without --group-query-attention is ignored, as Megatron-LM does.
  auto gqa = driver::parse_megatron_args("--num-query-groups 8", "cmd");
  EXPECT_FALSE(has_set(gqa, "workload.model.kv_heads=8"));
  EXPECT_TRUE(has_set(driver::parse_megatron_args("--group-query-attention --num-query-groups 8", "cmd"),
                      "workload.model.kv_heads=8"));
}

TEST(MegatronArgs, BadValuesNameTheArgument) {
  EXPECT_NE(error_of([] {
              driver::parse_megatron_args("--num-layers x", "cmd");
            }).find("cmd: --num-layers x: expected an integer"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              driver::parse_megatron_args("--num-layers $NUM_LAYERS", "cmd");
            }).find("unexpanded shell variable"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              driver::parse_megatron_args("--normalization BatchNorm", "cmd");
            }).find("podsim reads LayerNorm, RMSNorm"),
            std::string::npos);
  EXPECT_NE(error_of([] { driver::parse_megatron_args("--split '99,1", "cmd"); }).find("unterminated"),
            std::string::npos);
  EXPECT_NE(
      error_of([] {
        driver::parse_megatron_args(
            "--num-layers 30 --pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 2",
            "cmd");
      }).find("--num-layers-per-virtual-pipeline-stage 2"),
      std::string::npos);
  // Numbers too large for any model are named (before: "internal error: stoll"; a repeat count of 1e11
  // built its list for minutes).
  EXPECT_NE(error_of([] {
              driver::parse_megatron_args("--window-size 99999999999999999999,0", "cmd");
            }).find("cmd: --window-size '99999999999999999999,0': 99999999999999999999 is out of range"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              driver::parse_megatron_args("--window-size 127,0 --window-attn-skip-freq [1,0]*99999999999",
                                          "cmd");
            }).find("one entry per layer"),
            std::string::npos);
}
