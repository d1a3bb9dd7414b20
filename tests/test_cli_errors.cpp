// CLI error texts of issue 18: unknown commands, options that would do nothing, family-specific resize
// hints, and dp: auto choosing a degree that divides the batch.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include "podsim/cli/unknown_command.hpp"
#include "podsim/core/error.hpp"
#include "podsim/driver/collective.hpp"
#include "podsim/driver/simulation.hpp"
#include "podsim/topology/resize_hint.hpp"
#include "test_helpers.hpp"

namespace {

using podsim::InputError;
using podsim::testing::source_path;

std::string parse_error_message(std::vector<std::string> args) {
  CLI::App app{"test"};
  app.name("podsim");
  app.require_subcommand(1);
  app.add_subcommand("run", "");
  app.add_subcommand("sweep", "");
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return podsim::cli::unknown_command_message(app, e).value_or("(CLI11's own)");
  }
  return "(parsed)";
}

TEST(CliErrors, UnknownCommandListsTheCommands) {
  std::string m = parse_error_message({"simulate"});
  EXPECT_NE(m.find("unknown command 'simulate'; commands: run, sweep"), std::string::npos) << m;
  EXPECT_NE(parse_error_message({"rn"}).find("did you mean 'run'?"), std::string::npos);
  EXPECT_NE(parse_error_message({}).find("needs a command: run, sweep"), std::string::npos);
  EXPECT_EQ(parse_error_message({"run"}), "(parsed)");
}

podsim::driver::CollectiveRequest collective(const std::string& op, const std::string& algorithm) {
  podsim::driver::CollectiveRequest r;
  r.topology_file = source_path("topologies/dgx-a100-superpod.yaml");
  r.topology_sets = {{"nodes", "1"}};
  r.op = op;
  r.algorithm = algorithm;
  return r;
}

TEST(CliErrors, CollectiveOptionsThatDoNothingAreErrors) {
  EXPECT_THROW(podsim::driver::time_collective(collective("all_to_all", "ring")), InputError);
  EXPECT_THROW(podsim::driver::time_collective(collective("send_recv", "tree")), InputError);
  EXPECT_NO_THROW(podsim::driver::time_collective(collective("all_to_all", "auto")));
  auto r = collective("all_reduce", "ring");
  r.bytes = "1GB";
  r.max_bytes = "1MB";
  EXPECT_THROW(podsim::driver::time_collective(r), InputError);
  r.max_bytes = "4GB";
  EXPECT_EQ(podsim::driver::time_collective(r).sizes.size(), 3u);
}

TEST(CliErrors, ResizeHintNamesTheFamilysKey) {
  auto tpu = podsim::testing::preset("tpu-v4-pod");
  auto wafer = podsim::testing::preset("cerebras-cs2-cluster");
  auto gpu = podsim::testing::preset("dgx-a100-superpod");
  EXPECT_NE(podsim::topology::resize_hint(tpu).find("topology.dims"), std::string::npos);
  EXPECT_NE(podsim::topology::resize_hint(wafer).find("topology.systems"), std::string::npos);
  EXPECT_EQ(podsim::topology::resize_hint(gpu), "--set topology.nodes=N");
  try {
    podsim::driver::simulate(
        {source_path("topologies/tpu-v4-pod.yaml"),
         source_path("workloads/gpt3-175b.yaml"),
         {"workload.parallel.tp=64", "workload.parallel.pp=8", "workload.training.precision=bf16"}});
    FAIL() << "512 devices on a 128-core slice must not run";
  } catch (const InputError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("topology.dims"), std::string::npos) << m;
    EXPECT_EQ(m.find("topology.nodes"), std::string::npos) << m;
  }
}

// The obvious first run: 127 DGX H100 servers (1016 GPUs), GPT-3's batch 1536. dp: auto takes the largest
// dp that divides the batch (12, not 1016 / 64 = 15) and leaves the rest idle.
TEST(CliErrors, DpAutoChoosesADivisorOfTheBatch) {
  auto r = podsim::driver::simulate(
      {source_path("topologies/dgx-h100-superpod.yaml"), source_path("workloads/gpt3-175b.yaml"), {}});
  ASSERT_TRUE(r.ok()) << r.status_detail;
  EXPECT_EQ(r.setting("dp"), "12");
  EXPECT_EQ(r.devices(), 768);
  EXPECT_EQ(r.topology_devices, 1016);
}

}  // namespace
