// podsim validate on tables in NVIDIA's schema: schema detection, the preset mapping and its errors, a
// row's translation into --set overrides, the not_expressible reasons, and the JSON/CSV outputs. Tests use
// their own mapping files naming presets that exist on every branch (gpt3-175b.yaml, the DGX H100 preset).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "podsim/core/error.hpp"
#include "podsim/driver/nvidia_validation.hpp"
#include "study_test_helpers.hpp"
#include "test_helpers.hpp"

namespace podsim {
namespace {

using podsim::testing::source_path;
using study::test_support::temp_dir;
using study::test_support::write;

const char* kHeader =
    "row_id,system,model,num_gpus,precision,gbs,mbs,seq_len,fsdp,tp,pp,cp,vp,ep,tokens_per_sec_per_gpu\n";

// A mapping whose recipe sets only keys every branch has (recompute full: fits without FlashAttention).
std::string mapping_text(const std::string& workload, const std::string& extra_set = "") {
  return fmt::format(
      "sources: [test]\n"
      "recipes:\n"
      "  gpt3:\n"
      "    source: test\n"
      "    set:\n"
      "      parallel.zero: 1\n"
      "      parallel.sequence_parallel: true\n"
      "      training.recompute: full\n"
      "{}"
      "systems:\n"
      "  DGX-H100: {{topology: {}}}\n"
      "  DGX-B200: {{topology: null, reason: \"B200 preset comes with the machines issue\"}}\n"
      "models:\n"
      "  GPT3-175B: {{workload: {}, recipe: gpt3}}\n"
      "  Mixtral-8x7B: {{workload: null, reason: \"mixture-of-experts on GPUs is issue 15\"}}\n",
      extra_set, source_path("topologies/dgx-h100-superpod.yaml"), workload);
}

driver::PresetMapping test_mapping(const std::string& dir) {
  return driver::load_preset_mapping(
      write(dir, "map.yaml", mapping_text(source_path("workloads/gpt3-175b.yaml"))));
}

driver::NvidiaRow row_from(const std::string& line) {
  return driver::read_nvidia_row(parse_csv(std::string(kHeader) + line + "\n", "t.csv"), 0);
}

bool has_set(const driver::RowPlan& p, const std::string& s) {
  return std::find(p.request.sets.begin(), p.request.sets.end(), s) != p.request.sets.end();
}

TEST(NvidiaValidation, DetectsTheSchemaOfBothTables) {
  EXPECT_EQ(driver::detect_schema(read_csv(source_path("validation/nvidia-pretraining-h100-b200.csv"))),
            driver::TableSchema::nvidia);
  EXPECT_EQ(driver::detect_schema(read_csv(source_path("validation/megatron-sc21-table1.csv"))),
            driver::TableSchema::megatron_sc21);
  EXPECT_THROW(driver::detect_schema(parse_csv("a,b\n1,2\n", "x.csv")), InputError);
}

TEST(NvidiaValidation, ProjectMappingListsEverySystemAndModelOfTheTable) {
  auto m = driver::load_preset_mapping(source_path("validation/nvidia-presets.yaml"));
  auto table = read_csv(source_path("validation/nvidia-pretraining-h100-b200.csv"));
  for (size_t i = 0; i < table.rows.size(); ++i) {
    EXPECT_TRUE(m.systems.count(table.text(i, "system"))) << table.text(i, "system");
    EXPECT_TRUE(m.models.count(table.text(i, "model"))) << table.text(i, "model");
  }
  EXPECT_NE(m.systems.at("DGX-H100").file.find("topologies/dgx-h100-superpod.yaml"), std::string::npos);
  EXPECT_NE(m.systems.at("DGX-B200").file.find("topologies/dgx-b200-superpod.yaml"), std::string::npos);
  EXPECT_NE(m.models.at("DeepSeek-V3").file.find("workloads/deepseek-v3.yaml"), std::string::npos);
  EXPECT_EQ(m.models.at("DeepSeek-V3").recipe, "deepseek_v3");  // moe + Megatron-Bridge's recompute_modules
  const auto& sets = m.recipes.at("deepseek_v3").sets;
  EXPECT_NE(std::find(sets.begin(), sets.end(), "workload.training.recompute_modules=[mla_up_proj]"),
            sets.end());
  EXPECT_TRUE(m.models.at("Nemotron-3-Nano").file.empty());
  EXPECT_NE(m.models.at("Nemotron-3-Nano").reason.find("Mamba"), std::string::npos);
  EXPECT_EQ(m.models.at("GPT3-175B").recipe, "gpt3");
}

TEST(NvidiaValidation, RowBecomesOverridesOfTheRunCommand) {
  auto m = test_mapping(temp_dir("nv-plan"));
  // Row 287: GPT3-175B on 512 H100s, tp 4, pp 8, vp 6, mbs 2, gbs 2048.
  auto p =
      driver::plan_nvidia_row(row_from("287,DGX-H100,GPT3-175B,512,FP8,2048,2,2048,,4,8,1,6,,825"), m, 8);
  ASSERT_TRUE(p.not_expressible.empty()) << p.not_expressible;
  EXPECT_EQ(p.dp, 16);
  for (const char* s :
       {"topology.nodes=64", "workload.parallel.dp=16", "workload.parallel.tp=4", "workload.parallel.pp=8",
        "workload.parallel.schedule=interleaved", "workload.parallel.virtual_stages=6",
        "workload.training.global_batch=2048", "workload.training.micro_batch=2",
        "workload.model.seq_len=2048", "workload.training.precision=fp8", "workload.training.recompute=full"})
    EXPECT_TRUE(has_set(p, s)) << s;
  EXPECT_FALSE(has_set(p, "workload.parallel.zero=3"));  // fsdp empty: DDP + distributed optimizer
  EXPECT_TRUE(has_set(p, "workload.parallel.zero=1"));
  // The recipe's settings come first, so a row's column always wins.
  EXPECT_EQ(p.request.sets.front(), "workload.parallel.zero=1");
}

TEST(NvidiaValidation, FsdpColumnIsZero3WithThatShardGroupAndCpIsSet) {
  auto m = test_mapping(temp_dir("nv-fsdp"));
  // 12 GPUs on 8-GPU nodes: two nodes, and exactly 12 devices used (dp = 12 / (1*1*2) = 6).
  auto p =
      driver::plan_nvidia_row(row_from("9,DGX-H100,GPT3-175B,12,BF16,96,1,8192,6,1,1,2,n/a,n/a,100"), m, 8);
  ASSERT_TRUE(p.not_expressible.empty()) << p.not_expressible;
  EXPECT_EQ(p.dp, 6);
  for (const char* s : {"workload.parallel.zero=3", "workload.parallel.shard_group=6",
                        "workload.parallel.cp=2", "topology.nodes=2", "workload.parallel.schedule=1f1b",
                        "workload.parallel.virtual_stages=1", "workload.training.precision=bf16"})
    EXPECT_TRUE(has_set(p, s)) << s;
  auto zero3 = std::find(p.request.sets.begin(), p.request.sets.end(), "workload.parallel.zero=3");
  auto zero1 = std::find(p.request.sets.begin(), p.request.sets.end(), "workload.parallel.zero=1");
  EXPECT_GT(zero3, zero1);  // the row's FSDP overrides the recipe's distributed optimizer
  auto cp1 = driver::plan_nvidia_row(row_from("9,DGX-H100,GPT3-175B,8,BF16,96,1,8192,0,1,1,1,1,1,100"), m, 8);
  // Set even at 1: a preset may carry another cp (llama3.1-405b.yaml has 2), which the row must undo.
  EXPECT_TRUE(has_set(cp1, "workload.parallel.cp=1"));
  EXPECT_FALSE(has_set(cp1, "workload.parallel.zero=3"));
}

TEST(NvidiaValidation, PrecisionNames) {
  EXPECT_EQ(driver::podsim_precision("BF16"), "bf16");
  EXPECT_EQ(driver::podsim_precision("FP8"), "fp8");
  EXPECT_EQ(driver::podsim_precision("FP8-BLOCK"), "fp8_block");
  EXPECT_EQ(driver::podsim_precision("MXFP8"), "mxfp8");
  EXPECT_EQ(driver::podsim_precision("NVFP4"), "nvfp4");
  EXPECT_EQ(driver::podsim_precision("INT4"), "");
}

TEST(NvidiaValidation, NotExpressibleRowsSayWhy) {
  auto m = test_mapping(temp_dir("nv-why"));
  auto why = [&](const std::string& line) {
    return driver::plan_nvidia_row(row_from(line), m, 8).not_expressible;
  };
  EXPECT_EQ(why("1,DGX-H100,Mixtral-8x7B,64,FP8,256,2,4096,,1,1,1,1,,100"),
            "mixture-of-experts on GPUs is issue 15");
  // An ep column becomes parallel.ep (the workload's own validation then judges it).
  auto ep = driver::plan_nvidia_row(row_from("1,DGX-H100,GPT3-175B,64,FP8,256,2,2048,,1,8,1,1,8,100"), m, 8);
  EXPECT_EQ(ep.not_expressible, "");
  EXPECT_TRUE(has_set(ep, "workload.parallel.ep=8"));
  EXPECT_EQ(why("1,DGX-B200,GPT3-175B,512,FP8,2048,2,2048,,4,4,1,6,1,1600"),
            "B200 preset comes with the machines issue");
  EXPECT_NE(why("1,DGX-H100,Llama9-1T,64,FP8,256,2,2048,,1,8,1,1,1,100").find("model 'Llama9-1T' is not in"),
            std::string::npos);
  EXPECT_NE(why("1,DGX-A1,GPT3-175B,64,FP8,256,2,2048,,1,8,1,1,1,100").find("system 'DGX-A1' is not in"),
            std::string::npos);
  EXPECT_EQ(why("1,DGX-H100,GPT3-175B,64,FP8,256,2,2048,,1,8,1,1,1,"), "no published tokens_per_sec_per_gpu");
  EXPECT_EQ(why("1,DGX-H100,GPT3-175B,64,FP8,256,,2048,,1,8,1,1,1,100"), "the table does not state mbs");
  EXPECT_EQ(why("1,DGX-H100,GPT3-175B,60,FP8,256,2,2048,,1,8,1,1,1,100"),
            "num_gpus 60 is not divisible by tp*pp*cp = 8");
  EXPECT_EQ(why("1,DGX-H100,GPT3-175B,64,,256,2,2048,,1,8,1,1,1,100"),
            "the table does not state the precision");
}

TEST(NvidiaValidation, GradientAccumulationColumnIsCrossChecked) {
  auto m = test_mapping(temp_dir("nv-ga"));
  auto table = [](const std::string& ga) {
    return parse_csv(
        std::string("row_id,system,model,num_gpus,precision,gbs,mbs,seq_len,fsdp,tp,pp,cp,vp,ep,ga,"
                    "tokens_per_sec_per_gpu\n") +
            "320,DGX-H100,GPT3-175B,512,FP8,2048,2,2048,,4,8,1,6,1," + ga + ",866\n",
        "t.csv");
  };
  // 512 GPUs / (tp 4 * pp 8) = dp 16; 2048 / (2 * 16) = 64 accumulation steps, as published.
  EXPECT_EQ(driver::plan_nvidia_row(driver::read_nvidia_row(table("64"), 0), m, 8).not_expressible, "");
  EXPECT_EQ(driver::plan_nvidia_row(driver::read_nvidia_row(table("32"), 0), m, 8).not_expressible,
            "ga 32 disagrees with gbs / (mbs * dp) = 2048 / 32");
}

TEST(NvidiaValidation, MalformedCellNamesFileLineAndColumn) {
  try {
    row_from("1,DGX-H100,GPT3-175B,64,FP8,256,2.5,2048,,1,8,1,1,1,100");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("t.csv:2: column mbs"), std::string::npos) << e.what();
  }
}

// A table of ablations states what each run changed from its recipe in a settings column: applied after the
// recipe, as workload keys; a malformed entry or a key the row's own columns set is an error at its line.
TEST(NvidiaValidation, SettingsColumnChangesTheRecipePerRow) {
  auto m = test_mapping(temp_dir("nv-settings"));
  std::string header =
      "row_id,system,model,num_gpus,precision,gbs,mbs,seq_len,fsdp,tp,pp,cp,vp,ep,settings,"
      "tokens_per_sec_per_gpu\n";
  auto row = [&](const std::string& settings) {
    return driver::read_nvidia_row(
        parse_csv(header + "1,DGX-H100,GPT3-175B,512,FP8,2048,2,2048,,4,8,1,6,," + settings + ",825\n",
                  "t.csv"),
        0);
  };
  auto p = driver::plan_nvidia_row(row("training.recompute=selective; parallel.zero=2"), m, 8);
  ASSERT_TRUE(p.not_expressible.empty()) << p.not_expressible;
  const auto& s = p.request.sets;
  auto at = [&](const std::string& x) { return std::find(s.begin(), s.end(), x) - s.begin(); };
  ASSERT_TRUE(has_set(p, "workload.training.recompute=selective"));
  EXPECT_GT(at("workload.training.recompute=selective"), at("workload.training.recompute=full"));
  EXPECT_GT(at("workload.parallel.zero=2"), at("workload.parallel.zero=1"));
  EXPECT_TRUE(driver::plan_nvidia_row(row(""), m, 8).request.sets.size() + 2 == s.size());
  for (const auto& [bad, says] : std::vector<std::pair<std::string, std::string>>{
           {"training.recompute", "is not key=value"},
           {"parallel.tp=2", "each row sets it from its own columns"},
           {"topology.nodes=4", "workload keys only"}}) {
    try {
      row(bad);
      ADD_FAILURE() << bad << ": expected InputError";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("t.csv:2: column settings"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  }
}

TEST(NvidiaValidation, MappingErrorsNameFileAndLine) {
  std::string dir = temp_dir("nv-map-bad");
  std::string table =
      write(dir, "t.csv", std::string(kHeader) + "286,DGX-H100,GPT3-175B,128,FP8,256,1,2048,,4,8,1,6,,716\n");
  // A model naming a preset that does not exist: an input error at the mapping's line, before any row runs.
  std::string absent = write(dir, "absent.yaml", mapping_text(dir + "/no-such-preset.yaml"));
  try {
    driver::validate_nvidia_table({table, absent, {}, {}});
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("absent.yaml:13:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
  // A recipe setting a key each row sets from its columns would be overwritten silently.
  std::string row_key = write(dir, "rowkey.yaml", mapping_text(dir + "/x.yaml", "      parallel.tp: 2\n"));
  try {
    driver::load_preset_mapping(row_key);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rowkey.yaml:9:"), std::string::npos) << e.what();
  }
  // A model naming an undefined recipe.
  std::string text = mapping_text(dir + "/x.yaml");
  text.replace(text.find("recipe: gpt3"), 12, "recipe: gpt4");
  EXPECT_THROW(driver::load_preset_mapping(write(dir, "recipe.yaml", text)), InputError);
  // --rows naming a row the table lacks, --system matching no row.
  std::string good = write(dir, "good.yaml", mapping_text(source_path("workloads/gpt3-175b.yaml")));
  EXPECT_THROW(driver::validate_nvidia_table({table, good, {}, {"999"}}), InputError);
  EXPECT_THROW(driver::validate_nvidia_table({table, good, {"DGX-Z9"}, {}}), InputError);
}

TEST(NvidiaValidation, PredictsRowsAndWritesJsonThatParsesBack) {
  std::string dir = temp_dir("nv-run");
  std::string mapping = write(dir, "map.yaml", mapping_text(source_path("workloads/gpt3-175b.yaml")));
  // NVIDIA's rows 286 (GPT3-175B, 128 H100s) and 81 (an MoE row on B200), from the project's table.
  driver::NvidiaValidationRequest request{
      source_path("validation/nvidia-pretraining-h100-b200.csv"), mapping, {}, {"286", "81"}};
  auto v = driver::validate_nvidia_table(request);
  ASSERT_EQ(v.rows.size(), 2u);
  const auto& moe = v.rows[0];
  EXPECT_EQ(moe.row.row_id, "81");
  EXPECT_EQ(moe.status, "not_expressible");
  EXPECT_NE(moe.detail.find("model 'DeepSeek-V3' is not in"), std::string::npos)
      << moe.detail;  // not in this test's mapping
  const auto& gpt = v.rows[1];
  ASSERT_EQ(gpt.status, "ok") << gpt.detail;
  // Tokens/s/GPU from the step: 256 sequences of 2048 tokens over 128 GPUs.
  EXPECT_NEAR(gpt.predicted, 256.0 * 2048 / (gpt.step_time * 128), 1e-6 * gpt.predicted);
  EXPECT_NEAR(gpt.error_percent, 100 * (gpt.predicted - 716) / 716, 1e-9);
  EXPECT_EQ(v.ok_rows, 1);
  EXPECT_DOUBLE_EQ(v.mean_abs_error, std::fabs(gpt.error_percent));

  auto j = nlohmann::json::parse(driver::nvidia_validation_json(v));
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["metric"], "tokens_per_sec_per_gpu");
  EXPECT_EQ(j["rows"][0]["status"], "not_expressible");
  EXPECT_TRUE(j["rows"][0]["predicted"].is_null());
  EXPECT_EQ(j["rows"][0]["published"], 3328);
  EXPECT_EQ(j["rows"][1]["row_id"], "286");
  EXPECT_EQ(j["rows"][1]["system"], "DGX-H100");
  EXPECT_EQ(j["rows"][1]["model"], "GPT3-175B");
  EXPECT_DOUBLE_EQ(j["rows"][1]["predicted"].get<double>(), gpt.predicted);
  EXPECT_DOUBLE_EQ(j["rows"][1]["error_percent"].get<double>(), gpt.error_percent);
  EXPECT_EQ(j["summary"]["ok_rows"], 1);
  EXPECT_EQ(j["summary"]["status_counts"]["not_expressible"], 1);
  // The run behind an expressible row, as a command line (cli_contract.sh runs one and compares).
  EXPECT_TRUE(j["rows"][0]["command"].is_null());
  std::string command = j["rows"][1]["command"];
  EXPECT_EQ(command.rfind("podsim run -t ", 0), 0u) << command;
  for (const char* set : {"--set workload.parallel.tp=4", "--set workload.parallel.pp=8",
                          "--set workload.training.precision=fp8", "--set workload.training.recompute=full"})
    EXPECT_NE(command.find(set), std::string::npos) << set << " in " << command;

  driver::write_nvidia_validation_csv(dir + "/out", v);
  auto csv = read_csv(dir + "/out/validation.csv");
  ASSERT_EQ(csv.rows.size(), 2u);
  EXPECT_EQ(csv.text(1, "status"), "ok");
  EXPECT_EQ(csv.text(0, "detail"), moe.detail);
  EXPECT_EQ(csv.text(0, "command"), "");
  EXPECT_EQ(csv.text(1, "command"), gpt.command);
  EXPECT_EQ(csv.text(1, "settings"), "");  // a table without a settings column
  EXPECT_TRUE(j["rows"][1]["settings"].is_null());
}

TEST(NvidiaValidation, RunInputErrorIsAnErrorRowAndFiltersSelectRows) {
  std::string dir = temp_dir("nv-error");
  // A recipe key this build does not know: the run fails with an input error; the row says so.
  std::string mapping =
      write(dir, "map.yaml",
            mapping_text(source_path("workloads/gpt3-175b.yaml"), "      parallel.no_such_key: 1\n"));
  driver::NvidiaValidationRequest request{source_path("validation/nvidia-pretraining-h100-b200.csv"),
                                          mapping,
                                          {"DGX-H100"},
                                          {"286", "81", "312"}};
  auto v = driver::validate_nvidia_table(request);
  ASSERT_EQ(v.rows.size(), 1u);  // 81 and 312 are DGX-B200 rows
  EXPECT_EQ(v.rows[0].status, "error");
  EXPECT_NE(v.rows[0].detail.find("no_such_key"), std::string::npos) << v.rows[0].detail;
  EXPECT_EQ(v.ok_rows, 0);
}

// A recipe's set_on adds what the framework configures per GPU to that system's rows only, after `set`;
// a base recipe's settings come first; a set_on naming no system of the mapping is an error.
TEST(NvidiaValidation, RecipeSetOnAppliesPerSystemAndBaseRecipesInherit) {
  std::string dir = temp_dir("nv-set-on");
  std::string on = "    set_on:\n      DGX-H100:\n        parallel.tp_overlap_gemms.qkv_wgrad.num_sm: 24\n";
  std::string text = mapping_text(source_path("workloads/gpt3-175b.yaml"), on);
  text.replace(text.find("systems:"), 8,
               "  gpt3_big:\n    base: gpt3\n    source: test\n    set:\n      parallel.dp_overlap: false\n"
               "systems:");
  text.replace(text.find("recipe: gpt3}"), 13, "recipe: gpt3_big}");
  auto m = driver::load_preset_mapping(write(dir, "map.yaml", text));
  auto p =
      driver::plan_nvidia_row(row_from("287,DGX-H100,GPT3-175B,512,FP8,2048,2,2048,,4,8,1,6,,825"), m, 8);
  ASSERT_TRUE(p.not_expressible.empty()) << p.not_expressible;
  EXPECT_TRUE(has_set(p, "workload.parallel.zero=1"));  // from the base
  EXPECT_TRUE(has_set(p, "workload.parallel.dp_overlap=false"));
  EXPECT_TRUE(has_set(p, "workload.parallel.tp_overlap_gemms.qkv_wgrad.num_sm=24"));
  std::string bad = mapping_text(source_path("workloads/gpt3-175b.yaml"),
                                 "    set_on:\n      DGX-Z9:\n        parallel.zero: 1\n");
  auto err = podsim::testing::error_of([&] { driver::load_preset_mapping(write(dir, "bad.yaml", bad)); });
  EXPECT_NE(err.find("system 'DGX-Z9' is not listed under systems:"), std::string::npos) << err;
}

// The plan of a GPT3-175B row on DGX-H100 (512 GPUs, tp 4, pp 8, vp 6) of release `release` ("" = none).
driver::RowPlan plan_release_row(const driver::PresetMapping& m, const std::string& release) {
  const std::string header =
      "row_id,release,system,model,num_gpus,precision,gbs,mbs,seq_len,fsdp,tp,pp,cp,vp,ep,"
      "tokens_per_sec_per_gpu\n";
  auto row = driver::read_nvidia_row(
      parse_csv(header + "1," + release + ",DGX-H100,GPT3-175B,512,FP8,2048,2,2048,,4,8,1,6,,825\n", "t.csv"),
      0);
  EXPECT_EQ(row.release, release);
  return driver::plan_nvidia_row(row, m, 8);
}

// before_release: a row of an older release gets what its system ran then, after set and set_on, the
// oldest threshold's settings last (they win); rows of that release or newer, or without a release, do
// not. Releases that are not numbers and systems the mapping lacks are errors naming where.
TEST(NvidiaValidation, BeforeReleaseAppliesTheConfigurationOfOlderReleases) {
  std::string dir = temp_dir("nv-before-release");
  std::string older =
      "    before_release:\n"
      "      \"26.02\":\n        DGX-H100:\n          parallel.dp_bucket_MB: 40\n"
      "      \"25.11\":\n        DGX-H100:\n          parallel.dp_bucket_MB: 10\n";
  auto m = driver::load_preset_mapping(
      write(dir, "map.yaml", mapping_text(source_path("workloads/gpt3-175b.yaml"), older)));
  const std::string header =
      "row_id,release,system,model,num_gpus,precision,gbs,mbs,seq_len,fsdp,tp,pp,cp,vp,ep,"
      "tokens_per_sec_per_gpu\n";
  auto buckets = [&](const std::string& release) {
    auto p = plan_release_row(m, release);
    std::vector<std::string> out;
    for (const auto& set : p.request.sets)
      if (set.find("dp_bucket_MB") != std::string::npos) out.push_back(set);
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(buckets("25.09"), (V{"workload.parallel.dp_bucket_MB=40", "workload.parallel.dp_bucket_MB=10"}));
  EXPECT_EQ(buckets("25.11"), (V{"workload.parallel.dp_bucket_MB=40"}));
  EXPECT_EQ(buckets("26.02.01"), V{});  // 26.02.01 is after 26.02
  EXPECT_EQ(buckets(""), V{});
  auto bad_row = podsim::testing::error_of([&] {
    driver::read_nvidia_row(
        parse_csv(header + "1,rc1,DGX-H100,GPT3-175B,512,FP8,2048,2,2048,,4,8,1,6,,825\n", "t.csv"), 0);
  });
  EXPECT_NE(bad_row.find("t.csv:2: column release: 'rc1'"), std::string::npos) << bad_row;
  auto mapping_error = [&](const std::string& release, const std::string& system) {
    std::string older = fmt::format(
        "    before_release:\n      {}:\n        {}:\n          parallel.zero: 1\n", release, system);
    return podsim::testing::error_of([&] {
      driver::load_preset_mapping(
          write(dir, "bad.yaml", mapping_text(source_path("workloads/gpt3-175b.yaml"), older)));
    });
  };
  auto bad_key = mapping_error("next", "DGX-H100");
  EXPECT_NE(bad_key.find("'next' is not a release"), std::string::npos) << bad_key;
  auto bad_system = mapping_error("\"25.11\"", "DGX-Z9");
  EXPECT_NE(bad_system.find("system 'DGX-Z9' is not listed under systems:"), std::string::npos) << bad_system;
}

// A system's before_release: what the containers of older releases ran whatever the recipe (their
// libraries), after the recipe's settings; the shipped mapping runs the older rows with the attention
// library of their time.
TEST(NvidiaValidation, SystemBeforeReleaseSetsTheLibrariesOfOlderContainers) {
  std::string dir = temp_dir("nv-system-release");
  std::string text = mapping_text(source_path("workloads/gpt3-175b.yaml"));
  std::string plain =
      fmt::format("  DGX-H100: {{topology: {}}}\n", source_path("topologies/dgx-h100-superpod.yaml"));
  ASSERT_NE(text.find(plain), std::string::npos);
  text.replace(text.find(plain), plain.size(),
               fmt::format("  DGX-H100:\n    topology: {}\n    before_release:\n      \"26.02\": "
                           "{{training.attention_library: cudnn-2024.07}}\n",
                           source_path("topologies/dgx-h100-superpod.yaml")));
  auto m = driver::load_preset_mapping(write(dir, "map.yaml", text));
  auto library = [&](const std::string& release) {
    return has_set(plan_release_row(m, release), "workload.training.attention_library=cudnn-2024.07");
  };
  EXPECT_TRUE(library("24.07"));
  EXPECT_TRUE(library("25.11"));
  EXPECT_FALSE(library("26.02"));
  EXPECT_FALSE(library(""));
  std::string bad = text;
  bad.replace(bad.find("\"26.02\""), 7, "soon");
  auto err = podsim::testing::error_of([&] { driver::load_preset_mapping(write(dir, "bad.yaml", bad)); });
  EXPECT_NE(err.find("'soon' is not a release"), std::string::npos) << err;
  // The project's mapping: H100 rows before 26.02 run July 2024's cuDNN, B200 rows cuDNN 9.10 (newest
  // release first; the fp8 recipe of rows before 25.11 follows, NvidiaValidation.Fp8RowsRunTheirRecipe).
  auto shipped = driver::load_preset_mapping(source_path("validation/nvidia-presets.yaml"));
  ASSERT_EQ(shipped.systems.at("DGX-H100").before_release.size(), 2u);
  EXPECT_EQ(shipped.systems.at("DGX-H100").before_release[0].parts, (std::vector<int>{26, 2}));
  EXPECT_EQ(shipped.systems.at("DGX-H100").before_release[0].sets,
            std::vector<std::string>{"workload.training.attention_library=cudnn-2024.07"});
  EXPECT_EQ(shipped.systems.at("DGX-B200").before_release[0].sets,
            std::vector<std::string>{"workload.training.attention_library=cudnn-9.10"});
}

// One row of the table's schema (row_id, release, ..., tokens_per_sec_per_gpu) planned with mapping `m`.
driver::RowPlan plan_table_row(const driver::PresetMapping& m, const std::string& line) {
  const std::string header =
      "row_id,release,system,model,num_gpus,precision,gbs,mbs,seq_len,fsdp,tp,pp,cp,vp,ep,"
      "tokens_per_sec_per_gpu\n";
  return driver::plan_nvidia_row(driver::read_nvidia_row(parse_csv(header + line + "\n", "t.csv"), 0), m, 8);
}

// The value a plan gives `key`: the last setting wins, as --set does ("" when none sets it).
std::string last_set(const driver::RowPlan& p, const std::string& key) {
  std::string value;
  for (const auto& s : p.request.sets)
    if (s.rfind(key + "=", 0) == 0) value = s.substr(key.size() + 1);
  return value;
}

// The table's FP8 is Megatron-Bridge's current scaling from 25.11 on (its perf scripts' fp8_cs) and
// delayed scaling before (their --fp8_recipe default, NeMo's perf scripts, NeMo 1.x).
TEST(NvidiaValidation, Fp8RowsRunTheirRecipe) {
  auto m = driver::load_preset_mapping(source_path("validation/nvidia-presets.yaml"));
  auto recipe = [&](const std::string& line) {
    return last_set(plan_table_row(m, line), "workload.training.fp8_recipe");
  };
  EXPECT_EQ(recipe("288,24.07,DGX-H100,Llama2-7B,8,FP8,128,1,4096,,1,1,1,1,,16934"), "delayed");
  EXPECT_EQ(recipe("313,25.02,DGX-B200,Llama3-8B,8,FP8,128,1,8192,,1,1,1,1,,26006"), "delayed");
  EXPECT_EQ(recipe("277,25.09,DGX-H100,Llama3-8B,8,FP8,128,1,8192,,1,1,1,1,,14451"), "delayed");
  EXPECT_EQ(recipe("242,25.11,DGX-B200,Llama3-8B,8,FP8,128,2,8192,0,1,1,1,,1,30624"), "current");
  EXPECT_EQ(recipe("254,25.11,DGX-H100,Qwen3-30B-A3B,16,FP8,512,2,4096,0,1,2,1,24,8,5275"), "current");
}

// The shipped mapping gives each row the optimizer state its framework kept: NeMo 1.x's Apex
// distributed_fused_adam for the 24.07 rows (fp32 remainders; Nemotron-4 340B's launcher configuration no
// main copy and bf16 moments), Megatron-Core's default for the 25.02 B200 row.
TEST(NvidiaValidation, OlderRowsGetTheOptimizerStateTheirFrameworkKept) {
  auto m = driver::load_preset_mapping(source_path("validation/nvidia-presets.yaml"));
  auto plan = [&](const std::string& line) { return plan_table_row(m, line); };
  const std::string main = "workload.training.main_params", avg = "workload.training.exp_avg_precision";
  auto h100 = plan("293,24.07,DGX-H100,Nemotron4-340B,128,FP8,32,1,4096,,8,8,1,12,,326");
  EXPECT_EQ(last_set(h100, main), "none");
  EXPECT_EQ(last_set(h100, avg), "bf16");
  auto b200 = plan("317,25.02,DGX-B200,Nemotron4-340B,128,FP8,64,1,4096,,8,4,1,12,,602");
  EXPECT_EQ(last_set(b200, main), "fp32");
  EXPECT_EQ(last_set(b200, avg), "fp32");
  EXPECT_EQ(last_set(plan("288,24.07,DGX-H100,Llama2-7B,8,FP8,128,1,4096,,1,1,1,1,,16934"), main),
            "fp32_remainders");
  EXPECT_EQ(last_set(plan("287,24.07,DGX-H100,GPT3-175B,512,FP8,2048,2,2048,,4,8,1,6,,825"), main),
            "fp32_remainders");
  EXPECT_EQ(last_set(plan("320,25.02,DGX-H100,GPT3-175B,512,FP8,2048,2,2048,,4,8,1,6,,866"), main), "");
}

// Meta's Llama 3 405B table (validation/llama3-405b-meta.csv) with its own mapping: each row runs Meta's
// layout on the RoCE cluster preset, with the paper's FSDP (optimizer states and gradients sharded: ZeRO-2,
// each chunk's backward reduce-scattering in fp32). With whole fp32 gradients (ZeRO-1) every row was out of
// memory; sharded, the 16K-GPU rows run. The 8K-GPU row holds more micro-batches in flight on its first
// stages (Megatron's interleaved schedule, where Meta's flexible-N schedule ran it) and may still not fit.
TEST(MetaLlama3, RowsRunMetasLayoutOnItsRoceCluster) {
  driver::NvidiaValidationRequest request{source_path("validation/llama3-405b-meta.csv"),
                                          source_path("validation/meta-llama3-presets.yaml"),
                                          {},
                                          {}};
  auto v = driver::validate_nvidia_table(request);
  ASSERT_EQ(v.rows.size(), 3u);
  const int dp[] = {64, 128, 8};
  for (size_t i = 0; i < 3; ++i) {
    const auto& r = v.rows[i];
    EXPECT_EQ(r.dp, dp[i]) << r.row.row_id;
    for (const char* set : {"topologies/meta-h100-roce.yaml", "parallel.cp_algorithm=all_gather",
                            "parallel.rank_order=tp-cp-pp-dp", "parallel.virtual_stages=8",
                            "training.grad_reduce_precision=fp32", "training.precision=bf16",
                            "parallel.embedding_in_pipeline_split=true"})
      EXPECT_NE(r.command.find(set), std::string::npos) << r.row.row_id << " lacks " << set;
    EXPECT_NE(r.command.find("parallel.zero=2"), std::string::npos) << r.row.row_id;
    if (i > 0) {
      EXPECT_EQ(r.status, "ok") << r.row.row_id << ": " << r.detail;
    } else if (r.status == "out_of_memory") {  // by the activations, with the gradients sharded
      EXPECT_NE(r.detail.find("gradients 0."), std::string::npos) << r.detail;
    }
  }
}

}  // namespace
}  // namespace podsim
