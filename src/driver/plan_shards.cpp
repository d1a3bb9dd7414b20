// `podsim plan` in shards: write one shard's rows, merge every shard's, submit the array (plan_shards.hpp).
#include "podsim/driver/plan_shards.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <regex>

#include "podsim/core/atomic_write.hpp"
#include "podsim/core/error.hpp"
#include "podsim/driver/plan_output.hpp"
#include "podsim/driver/shard_files.hpp"
#include "podsim/driver/sweep.hpp"
#include "podsim/report/output_files.hpp"
#include "sim_outcome_json.hpp"

namespace podsim::driver {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::regex kShardFile(R"(plan\.shard-(\d+)-of-(\d+)\.json)");

std::string absolute(const std::string& path) {
  return fs::absolute(path).lexically_normal().string();
}

// What identifies the search: every shard of one plan must agree on it.
json request_json(const PlanRequest& r) {
  return {{"topology_file", absolute(r.topology_file)},
          {"workload_file", absolute(r.workload_file)},
          {"sets", r.sets},
          {"as_written", r.as_written},
          {"top", r.options.top},
          {"distinct", r.options.distinct},
          {"exhaustive", r.options.exhaustive}};
}

PlanRequest request_from(const json& j) {
  PlanRequest r;
  r.topology_file = j.at("topology_file").get<std::string>();
  r.workload_file = j.at("workload_file").get<std::string>();
  r.sets = j.at("sets").get<std::vector<std::string>>();
  r.as_written = j.at("as_written").get<bool>();
  r.options.top = j.at("top").get<int>();
  r.options.exhaustive = j.at("exhaustive").get<bool>();
  r.options.distinct = j.value("distinct", std::vector<std::string>{});  // shards of older builds: none
  return r;
}

json row_json(const PlanRow& r) {
  const CandidateEstimate& e = r.estimate;
  json j = {{"values", std::vector<long long>(r.values.begin(), r.values.end())},
            {"estimate",
             {{"memory_bytes", e.memory_bytes},
              {"fits", e.fits},
              {"lower_bound", e.lower_bound},
              {"compute", e.compute},
              {"tp_comm", e.tp_comm},
              {"dp_comm", e.dp_comm},
              {"cp_comm", e.cp_comm},
              {"ep_comm", e.ep_comm},
              {"pp_comm", e.pp_comm},
              {"optimizer", e.optimizer},
              {"fabric_load", e.fabric_load}}},
            {"simulated", r.simulated()}};
  if (r.simulated()) j["sim"] = sim_outcome_json(r.sim());
  return j;
}

// A row of a shard of a search over `keys` keys.
PlanRow row_from(const json& j, size_t keys) {
  PlanRow r;
  auto values = j.at("values").get<std::vector<long long>>();
  bool in_range = std::all_of(values.begin(), values.end(), [](long long v) {
    return v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max();
  });
  if (values.size() != keys || !in_range)
    throw InputError(
        fmt::format("a plan shard row has {} values{}, where this search has {} keys: not a shard "
                    "of this podsim plan",
                    values.size(), in_range ? "" : " (some beyond 32 bits)", keys));
  r.values.assign(values.begin(), values.end());
  const json& e = j.at("estimate");
  r.estimate = {.memory_bytes = e.at("memory_bytes").get<double>(),
                .fits = e.at("fits").get<bool>(),
                .lower_bound = e.at("lower_bound").get<double>(),
                .compute = e.at("compute").get<double>(),
                .tp_comm = e.at("tp_comm").get<double>(),
                .dp_comm = e.at("dp_comm").get<double>(),
                .cp_comm = e.value("cp_comm", 0.0),
                .ep_comm = e.value("ep_comm", 0.0),  // shards of older builds have no cp_comm
                .pp_comm = e.value("pp_comm", 0.0),  // nor pp_comm (before session 48)
                .optimizer = e.value("optimizer", 0.0),
                .fabric_load = e.value("fabric_load", 0.0)};
  if (j.at("simulated").get<bool>()) r.set_sim(sim_outcome_from(j.at("sim")));
  return r;
}

// Every plan.shard-I-of-N.json in `dirs`, parsed; InputError when a shard is missing or splits differ.
std::vector<json> read_shards(const std::vector<std::string>& dirs) {
  static const ShardFilePattern pattern{kShardFile, "plan.shard-I-of-N.json", "plan shard",
                                        "podsim plan ... --shard I/{} --out DIR"};
  std::vector<json> shards;
  for (const auto& file : find_shard_files(dirs, pattern)) {
    try {
      shards.push_back(json::parse(std::ifstream(file)));
    } catch (const json::exception& ex) {
      throw InputError(fmt::format("{}: not a plan shard file podsim wrote ({})", file, ex.what()));
    }
  }
  return shards;
}

}  // namespace

std::string plan_file_stem(const std::string& dir, int shard, int shards) {
  return shards > 1 ? fmt::format("{}/plan.shard-{}-of-{}", dir, shard, shards) : dir + "/plan";
}

std::string write_plan_shard(const std::string& dir, const PlanRequest& request, const PlanResult& result) {
  json rows = json::array();
  for (const auto& r : result.rows) rows.push_back(row_json(r));
  json j = {{"podsim_plan_shard", 1},
            {"shard", request.options.shard},
            {"shards", request.options.shards},
            {"request", request_json(request)},
            {"enumerated", result.enumerated},
            {"skipped", result.skipped},
            {"simulated", result.simulated},
            {"seconds", result.seconds},
            {"rows", rows}};
  fs::create_directories(dir);
  std::string file = plan_file_stem(dir, request.options.shard, request.options.shards) + ".json";
  // A message cut at its length limit may end inside a UTF-8 sequence: replaced, not thrown on.
  podsim::atomic_write(file, j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
  return file;
}

bool has_plan_shards(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return false;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (std::regex_match(name, kShardFile)) return true;
  }
  return false;
}

PlanRun merge_plan_shards(const std::vector<std::string>& dirs, const std::string& out) {
  std::vector<json> shards = read_shards(dirs);
  const json& first = shards.front();
  for (const auto& s : shards)
    if (s.at("request") != first.at("request"))
      throw InputError(
          "the plan shard files are of different searches (topology, workload, --set, --top, "
          "--distinct or --as-written differ); merge the shards of one podsim plan");
  PlanRequest request = request_from(first.at("request"));
  topology::Topology topo;
  PlanRun run{.space = load_plan_space(request, topo), .result = {}, .written = {}, .title = ""};
  run.title = fmt::format("{} on {}", run.space.base.name, topo.name);
  run.top = request.options.top;
  PlanResult& r = run.result;
  r.distinct = distinct_key_indices(run.space, request.options.distinct);
  r.enumerated = first.at("enumerated").get<long long>();
  r.skipped = first.at("skipped").get<SkipCounts>();
  for (const auto& s : shards) {
    r.simulated += s.at("simulated").get<long long>();
    r.seconds = std::max(r.seconds, s.at("seconds").get<double>());  // the slowest shard's wall time
    for (const auto& row : s.at("rows")) r.rows.push_back(row_from(row, run.space.keys.size()));
  }
  // Lower-bound order first so that equal ranks come out as in one unsharded search.
  order_by_lower_bound(r.rows);
  rank_rows(r.rows);
  std::string dir = out.empty() ? dirs.front() : out;
  report::prepare_output_directory(dir, "--out");
  run.written = write_plan_files(dir, run.title, run.space, run.result);
  return run;
}

SlurmSubmitted submit_slurm_plan(const PlanRequest& request, const SlurmSubmission& job) {
  if (job.out.empty()) throw InputError("--slurm: give --out DIR for the shards' files and the merge");
  topology::Topology topo;
  load_plan_space(request, topo);  // bad input fails here, not in every array task
  report::prepare_output_directory(job.out, "--out");
  std::string args = fmt::format("plan -t {} -w {}", shell_quote(absolute(request.topology_file)),
                                 shell_quote(absolute(request.workload_file)));
  for (const auto& s : request.sets) args += " --set " + shell_quote(s);
  args += fmt::format(" --top {}", request.options.top);
  if (!request.options.distinct.empty())
    args += " --distinct " + shell_quote(fmt::format("{}", fmt::join(request.options.distinct, ",")));
  if (request.as_written) args += " --as-written";
  if (request.options.exhaustive) args += " --exhaustive";
  // --resume: a task requeued after a preemption or a node failure continues its shard from its journal.
  args += fmt::format(" --out {} --resume --quiet", shell_quote(absolute(job.out)));
  return submit_slurm_array(job, "plan", args);
}

}  // namespace podsim::driver
