// nccl-tests' JSON output (`-J FILE.json` / `--output_file FILE.json`, nccl-tests 2.17+; format from
// github NVIDIA/nccl-tests @ a0b82b2 src/util.cu, JSON_FILE_VERSION 3): {"version", "args": [argv...],
// "nccl_version", "config": {"ngpus", ..., "devices": [{"rank", "hostname", "device_info", ...}]},
// "results": [{"size", "count", "type", "redop", "root", "out_of_place": {"time" | "cpu_time", "alg_bw",
// "bus_bw", "nwrong"} | null, "in_place": {...}}], ...}. Times in microseconds, bandwidths in GB/s, as
// in the text output. Only rank 0 writes the file, so it describes the whole run.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "podsim/core/error.hpp"
#include "podsim/fit/nccl_tests_log.hpp"

namespace podsim::calibration {
namespace {

using nlohmann::json;

const json& member(const json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key))
    throw InputError(
        fmt::format("{}: no '{}' (nccl-tests JSON output has version, config.devices and "
                    "results)",
                    where, key));
  return j[key];
}

double positive(const json& j, const char* key, const std::string& where) {
  const json& v = member(j, key, where);
  if (!v.is_number() || !(v.get<double>() > 0))
    throw InputError(fmt::format("{}: '{}' must be a number > 0, got {}", where, key, v.dump()));
  return v.get<double>();
}

void read_devices(const json& config, const std::string& name, NcclTestsLog& log) {
  const json& devices = member(config, "devices", name + ": config");
  if (!devices.is_array() || devices.empty())
    throw InputError(
        fmt::format("{}: config.devices lists no GPUs: the log must show which took part", name));
  std::set<long long> ranks;
  for (const auto& d : devices) {
    const json& host = member(d, "hostname", name + ": config.devices[]");
    ranks.insert(member(d, "rank", name + ": config.devices[]").get<long long>());
    std::string h = host.is_string() ? host.get<std::string>() : host.dump();
    if (std::find(log.hosts.begin(), log.hosts.end(), h) == log.hosts.end()) log.hosts.push_back(h);
    if (d.contains("device_info") && d["device_info"].is_string())
      log.device = d["device_info"].get<std::string>();
  }
  log.ranks = static_cast<int>(ranks.size());
  log.nodes = static_cast<int>(log.hosts.size());
}

void read_results(const json& results, const std::string& name, NcclTestsLog& log) {
  if (!results.is_array() || results.empty())
    throw InputError(fmt::format("{}: 'results' has no rows (did the test fail or stop early?)", name));
  for (size_t i = 0; i < results.size(); ++i) {
    std::string where = fmt::format("{}: results[{}]", name, i);
    const json& r = results[i];
    const json* timing = r.contains("out_of_place") && !r["out_of_place"].is_null() ? &r["out_of_place"]
                         : r.contains("in_place")                                   ? &r["in_place"]
                                                                                    : nullptr;
    if (!timing || timing->is_null()) throw InputError(where + ": neither out_of_place nor in_place timings");
    NcclTestsRow row;
    row.line = static_cast<int>(i) + 1;
    row.bytes = positive(r, "size", where);
    row.seconds = positive(*timing, timing->contains("time") ? "time" : "cpu_time", where) * 1e-6;
    row.busbw = member(*timing, "bus_bw", where).get<double>() * 1e9;
    if (!log.rows.empty() && row.bytes <= log.rows.back().bytes)
      throw InputError(fmt::format("{}: size {} B does not increase (results[{}] had {} B)", where, row.bytes,
                                   i - 1, log.rows.back().bytes));
    log.rows.push_back(row);
  }
}

}  // namespace

bool is_nccl_tests_json(const std::string& text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string::npos && text[first] == '{';
}

std::vector<NcclTestsLog> parse_nccl_tests_json(const std::string& text, const std::string& name,
                                                const std::string& op_override) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("{}: not valid JSON ({})", name, e.what()));
  }
  NcclTestsLog log;
  log.file = name;
  log.first_line = 1;
  const json& args = member(doc, "args", name);
  if (args.is_array() && !args.empty() && args[0].is_string())
    log.program = std::filesystem::path(args[0].get<std::string>()).filename().string();
  log.op = !op_override.empty() ? to_podsim_collective(op_override) : to_podsim_collective(log.program);
  if (log.op.empty())
    throw InputError(
        fmt::format("{}: args[0] '{}' is not an nccl-tests program podsim models; pass --op "
                    "all_reduce|all_gather|reduce_scatter|alltoall|sendrecv|broadcast",
                    name, log.program));
  if (doc.contains("version")) log.version = "nccl-tests JSON v" + doc["version"].dump();
  if (doc.contains("nccl_version") && doc["nccl_version"].is_number_integer()) {
    long v = doc["nccl_version"].get<long>();
    log.version += fmt::format(", NCCL {}.{}.{}", v / 10000, (v / 100) % 100, v % 100);
  }
  read_devices(member(doc, "config", name), name, log);
  read_results(member(doc, "results", name), name, log);
  return {log};
}

}  // namespace podsim::calibration
