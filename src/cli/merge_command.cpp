// podsim merge: the shard results of a sweep joined into one (driver/merge.hpp does the work).
#include "podsim/cli/merge_command.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <memory>

#include "podsim/driver/merge.hpp"
#include "podsim/driver/plan_output.hpp"
#include "podsim/driver/plan_shards.hpp"

namespace podsim::cli {

void add_merge_command(CLI::App& app) {
  auto request = std::make_shared<driver::MergeRequest>();
  CLI::App* merge =
      app.add_subcommand("merge", "Join the shard results of a sweep into one results.csv and report.html");
  merge->add_option("dirs", request->dirs, "Sweep directories holding results.shard-I-of-N.csv files")
      ->required();
  merge->add_option("--out,-o", request->out,
                    "Where to write results.csv and report.html (default: the first directory)");
  merge->callback([request] {
    if (driver::has_plan_shards(request->dirs.front())) {  // the shards of podsim plan --slurm / --shard
      auto run = driver::merge_plan_shards(request->dirs, request->out);
      fmt::print("{}\n", run.title);
      driver::print_plan(stdout, run.space, run.result, run.top);
      for (const auto& f : run.written) fmt::print("wrote {}\n", f);
      return;
    }
    auto merged = driver::merge_sweeps(*request);
    fmt::print("merged {} shard files, {} points -> {} and {}\n", merged.shard_files, merged.points,
               merged.results_file, merged.report);
  });
}

}  // namespace podsim::cli
