// The journal of a plan search (plan_journal.hpp).
#include "podsim/driver/plan_journal.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "podsim/core/atomic_write.hpp"
#include "podsim/core/error.hpp"
#include "podsim/core/version.hpp"
#include "podsim/driver/plan_shards.hpp"
#include "podsim/driver/provenance.hpp"
#include "sim_outcome_json.hpp"

namespace podsim::driver {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The lock file's path, in the output directory (made here: the lock is taken before anything is written).
std::string lock_path(const std::string& out, int shard, int shards) {
  fs::create_directories(out);
  return plan_file_stem(out, shard, shards) + ".lock";
}

// What a candidate's outcome depends on besides its own values.
json identity(const PlanRequest& request, const topology::Topology& topo) {
  json inputs = json::object();
  for (const auto& f : input_files(request.topology_file, request.workload_file, topo))
    inputs[f.role] = {{"path", fs::absolute(f.path).lexically_normal().string()}, {"sha256", f.sha256}};
  return {{"podsim_plan_journal", 1},
          {"podsim_version", version()},
          {"inputs", inputs},
          {"sets", request.sets},
          {"as_written", request.as_written}};
}

// What differs between an earlier search's identity and this one's, for the message.
std::string differences(const json& before, const json& now) {
  std::vector<std::string> out;
  if (before.value("podsim_version", "") != now.at("podsim_version"))
    out.push_back(fmt::format("podsim's version ({} then, {} now)", before.value("podsim_version", "?"),
                              now.at("podsim_version").get<std::string>()));
  const json none = json::object();
  const json& then = before.contains("inputs") ? before.at("inputs") : none;
  for (const auto& [role, input] : now.at("inputs").items()) {
    if (!then.contains(role) || then.at(role).value("path", "") != input.at("path"))
      out.push_back(fmt::format("the {} file ({} now)", role, input.at("path").get<std::string>()));
    else if (then.at(role).value("sha256", "") != input.at("sha256"))
      out.push_back(fmt::format("the content of {} (edited since)", input.at("path").get<std::string>()));
  }
  if (before.value("sets", json::array()) != now.at("sets")) out.push_back("the --set list");
  if (before.value("as_written", false) != now.at("as_written")) out.push_back("--as-written");
  std::string text;
  for (size_t i = 0; i < out.size(); ++i)
    text += (i == 0 ? "" : i + 1 == out.size() ? " and " : ", ") + out[i];
  return text.empty() ? "its first line" : text;
}

}  // namespace

PlanJournal::PlanJournal(const PlanRequest& request, const topology::Topology& topo, int shard, int shards)
    : path_(plan_file_stem(request.out, shard, shards) + ".partial.jsonl"),
      lock_(lock_path(request.out, shard, shards), request.out, "plan search") {
  const json now = identity(request, topo);
  std::string kept = now.dump() + "\n";
  if (fs::exists(path_)) {
    if (!request.resume)
      throw InputError(fmt::format(
          "{}: an interrupted podsim plan left the candidates it simulated here; --resume continues that "
          "search, or remove the file (or give another --out) to start afresh",
          path_));
    std::ifstream in(path_);
    std::string line;
    std::getline(in, line);
    json before = json::parse(line, nullptr, false);
    if (before.is_discarded() || !before.is_object() || !before.contains("podsim_plan_journal"))
      throw InputError(
          fmt::format("{}: not the journal of a podsim plan search (its first line); remove it "
                      "to start afresh",
                      path_));
    if (before != now)
      throw InputError(fmt::format(
          "{}: the journal of another search: it differs from this one in {}; its candidates' outcomes "
          "would not be this search's. Remove it (or give another --out) to start afresh",
          path_, differences(before, now)));
    // Every whole line; a kill mid-write leaves at most a torn last one, which is dropped.
    std::vector<std::string> lines;
    while (std::getline(in, line)) lines.push_back(line);
    for (size_t i = 0; i < lines.size(); ++i) {
      try {
        json j = json::parse(lines[i]);
        SimOutcome o = sim_outcome_from(j.at("sim"));
        if (o.status == "failed") continue;
        previous_[j.at("candidate").get<std::string>()] = std::move(o);
        kept += lines[i] + "\n";
      } catch (const json::exception& e) {
        if (i + 1 < lines.size())
          throw InputError(
              fmt::format("{}:{}: not a candidate line of a plan journal ({}); remove the file to "
                          "start afresh",
                          path_, i + 2, e.what()));
      }
    }
  }
  // The journal restarts with what is kept, so that appending never follows a torn line.
  podsim::atomic_write(path_, kept);
  out_ = std::make_unique<study::LineAppender>(path_);
}

const SimOutcome* PlanJournal::recall(const std::string& label) const {
  auto it = previous_.find(label);
  return it == previous_.end() ? nullptr : &it->second;
}

void PlanJournal::record(const std::string& label, const SimOutcome& outcome) {
  // A message cut at its length limit may end inside a UTF-8 sequence: replaced, not thrown on.
  json line{{"candidate", label}, {"sim", sim_outcome_json(outcome)}};
  if (out_) out_->write(line.dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
}

void PlanJournal::finish() {
  out_.reset();
  std::error_code ec;
  fs::remove(path_, ec);
}

}  // namespace podsim::driver
