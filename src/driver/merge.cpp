#include "podsim/driver/merge.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "podsim/core/error.hpp"
#include "podsim/driver/shard_files.hpp"
#include "podsim/driver/sweep_output.hpp"
#include "podsim/report/output_files.hpp"
#include "podsim/study/results.hpp"

namespace podsim::driver {
namespace {

namespace fs = std::filesystem;

// The complete shard files in `dirs` (InputError when shards are missing or of different splits), and the
// sweep.json of the first directory that has one.
std::vector<std::string> find_sweep_shards(const std::vector<std::string>& dirs, nlohmann::json& meta) {
  static const ShardFilePattern pattern{std::regex(R"(results\.shard-(\d+)-of-(\d+)\.csv)"),
                                        "results.shard-I-of-N.csv", "shard",
                                        "podsim sweep ... --shard I/{} --resume"};
  auto files = find_shard_files(dirs, pattern);
  for (const auto& dir : dirs)
    if (meta.is_null() && fs::exists(dir + "/sweep.json"))
      meta = nlohmann::json::parse(std::ifstream(dir + "/sweep.json"));
  return files;
}

}  // namespace

MergeResult merge_sweeps(const MergeRequest& request) {
  std::string out = request.out.empty() ? request.dirs.front() : request.out;
  nlohmann::json meta;
  auto files = find_sweep_shards(request.dirs, meta);
  study::ResultsTable merged;
  std::set<std::string> ids;
  for (const auto& f : files) {
    auto t = study::read_results(f, merged.columns);
    if (merged.columns.empty()) merged.columns = t.columns;
    for (auto& r : t.rows)
      if (ids.insert(r.id).second) merged.rows.push_back(std::move(r));
  }
  if (!meta.is_null() && meta.contains("points") && merged.rows.size() != meta["points"].get<size_t>())
    throw InputError(fmt::format("the shards hold {} of the study's {} points", merged.rows.size(),
                                 meta["points"].get<size_t>()));
  report::prepare_output_directory(out, "--out");
  study::write_results(out + "/results.csv", merged);
  std::vector<std::string> axis_keys;
  std::string name = "podsim sweep", description, baseline;
  if (!meta.is_null()) {
    axis_keys = meta.value("axis_keys", std::vector<std::string>{});
    name = meta.value("name", name);
    description = meta.value("description", "");
    baseline = meta.value("baseline", "");
  }
  auto table = study::read_results(out + "/results.csv");
  std::string report = write_sweep_report(out, table, name, description, axis_keys, baseline);
  return {files.size(), merged.rows.size(), out + "/results.csv", report};
}

}  // namespace podsim::driver
