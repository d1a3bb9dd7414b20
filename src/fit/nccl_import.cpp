#include "podsim/fit/nccl_import.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <fstream>
#include <map>

#include "podsim/fit/collective_geometry.hpp"
#include "podsim/fit/profile_output.hpp"
#include "podsim/fit/profile_writer.hpp"
#include "podsim/topology/loader.hpp"

namespace podsim::fit {
namespace {

std::string tested_text(const std::vector<calibration::NcclTestsLog>& tests) {
  std::string tested;
  for (const auto& log : tests)
    tested +=
        fmt::format("{}{}:{} {} ({}, {} ranks on {} host(s), {}{})", tested.empty() ? "" : "; ", log.file,
                    log.first_line, log.program.empty() ? log.op : log.program, log.device, log.ranks,
                    log.nodes, log.hosts.empty() ? "?" : log.hosts.front() + (log.nodes > 1 ? ", ..." : ""),
                    log.version.empty() ? "" : ", " + log.version);
  return tested;
}

// Test data written in nccl-tests' format says so in its first line; the profile must not call it measured.
bool any_synthetic(const std::vector<std::string>& files) {
  bool synthetic = false;
  for (const auto& f : files) {
    std::ifstream in(f);
    std::string first;
    std::getline(in, first);
    synthetic = synthetic || first.find("not a measurement") != std::string::npos;
  }
  return synthetic;
}

std::vector<calibration::Provenance> fabric_provenance(const NcclImport& r,
                                                       const calibration::FabricProfile& base) {
  const auto& req = r.request;
  bool synthetic = any_synthetic(req.logs);
  std::vector<calibration::Provenance> prov;
  prov.push_back(
      {synthetic ? "prior" : "measured",
       fmt::format("{}{}; imported {}; logs: {}", synthetic ? "NOT A MEASUREMENT (test data); " : "",
                   command_line("nccl-tests",
                                {fmt::format("{}", fmt::join(req.logs, " ")), "--topology " + req.topology}),
                   today_utc(), tested_text(r.tests)),
       r.fit.notes.front() + " (interpreted on " + req.topology + ")"});
  std::string base_kind = "derived";
  for (const auto& bp : base.provenance)
    if (bp.kind == "prior") base_kind = "prior";
  prov.push_back({base_kind, base.file.empty() ? "base profile" : base.file,
                  "kept from the base profile for what the logs do not measure (its provenance says where "
                  "they come from)"});
  return prov;
}

// "NVIDIA A100-SXM4-80GB" (what CUDA names the GPU) against a device spec named "A100-SXM4-80GB".
bool same_gpu(const std::string& log_device, const std::string& device) {
  auto squash = [](std::string s) {
    std::string out;
    for (char c : s)
      if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(c));
    if (out.rfind("nvidia", 0) == 0) out = out.substr(6);
    return out;
  };
  std::string a = squash(log_device), b = squash(device);
  return a.empty() || b.empty() || a.find(b) != std::string::npos || b.find(a) != std::string::npos;
}

}  // namespace

namespace {

// What does not match, without the log's location.
std::vector<std::string> mismatch_texts(const calibration::NcclTestsLog& log,
                                        const std::string& topology_name, int topology_nodes,
                                        int devices_per_node, const std::string& device) {
  std::vector<std::string> w;
  int per_host = log.nodes > 0 ? log.ranks / log.nodes : log.ranks;
  if (per_host < devices_per_node)
    w.push_back(
        fmt::format("{} GPU(s) per host, but a server of {} has {}: fitted as the first {} GPUs of "
                    "each server (is this the machine the log was measured on?)",
                    per_host, topology_name, devices_per_node, per_host));
  if (log.nodes < topology_nodes)
    w.push_back(
        fmt::format("the log spans {} host(s), the topology {} servers: fitted on the first {} "
                    "(links beyond them are not measured by this log)",
                    log.nodes, topology_nodes, log.nodes));
  if (!same_gpu(log.device, device))
    w.push_back(
        fmt::format("the log's GPU is {}, the topology's {}: is --topology the machine the log "
                    "was measured on?",
                    log.device, device));
  return w;
}

}  // namespace

std::vector<std::string> log_topology_mismatch(const calibration::NcclTestsLog& log,
                                               const std::string& topology_name, int topology_nodes,
                                               int devices_per_node, const std::string& device) {
  std::vector<std::string> w;
  for (auto& text : mismatch_texts(log, topology_name, topology_nodes, devices_per_node, device))
    w.push_back(fmt::format("{}:{}: {}", log.file, log.first_line, text));
  return w;
}

std::vector<std::string> logs_topology_mismatch(const std::vector<calibration::NcclTestsLog>& logs,
                                                const std::string& topology_name, int topology_nodes,
                                                int devices_per_node, const std::string& device) {
  std::vector<std::string> out;
  std::vector<int> repeats;
  std::map<std::pair<std::string, std::string>, size_t> first;  // (file, text) -> index in out
  for (const auto& log : logs)
    for (auto& text : mismatch_texts(log, topology_name, topology_nodes, devices_per_node, device)) {
      auto [it, fresh] = first.try_emplace({log.file, text}, out.size());
      if (!fresh) {
        ++repeats[it->second];
        continue;
      }
      out.push_back(fmt::format("{}:{}: {}", log.file, log.first_line, text));
      repeats.push_back(0);
    }
  for (size_t i = 0; i < out.size(); ++i)
    if (repeats[i] > 0) out[i] += fmt::format(" (also {} more test(s) of this file)", repeats[i]);
  return out;
}

NcclImport import_nccl_tests(const NcclImportRequest& req) {
  auto topo = topology::load_topology(req.topology, req.topology_sets);
  calibration::FabricProfile base =
      req.base.empty() ? topo.fabric_profile : calibration::load_fabric_profile(req.base);

  NcclImport r;
  r.request = req;
  r.topology_name = topo.name;
  for (const auto& f : req.logs)
    for (auto& log : calibration::read_nccl_tests_log(f, req.op)) r.tests.push_back(std::move(log));
  std::vector<network::Collective> collectives;
  std::vector<calibration::CollectiveGeometry> geometry;
  for (const auto& log : r.tests) {
    collectives.push_back(measured_collective(topo, log));
    geometry.push_back(collective_geometry(topo, collectives.back()));
  }
  // Once per file: a log of many tests (sizes, operations) would otherwise repeat each warning per test.
  r.warnings =
      logs_topology_mismatch(r.tests, topo.name, topo.nodes, topo.devices_per_node, topo.device.name);
  calibration::FabricFitOptions fo;
  fo.name = req.name;
  r.fit = calibration::fit_fabric_profile(r.tests, geometry, base, fo,
                                          [&](size_t i, double bytes, const calibration::FabricProfile& p) {
                                            auto c = collectives[i];
                                            c.bytes = bytes;
                                            return predicted_collective_time(topo, p, c);
                                          });
  r.fit.profile.provenance = fabric_provenance(r, base);
  return r;
}

void write_fabric_profile(const std::string& path, const NcclImport& r) {
  const auto& p = r.fit.profile;
  write_checked(path,
                calibration::fabric_profile_yaml(
                    p, {fmt::format("{}: imported from nccl-tests logs by podsim calibrate nccl-tests on {}.",
                                    p.name, today_utc()),
                        "See provenance for the logs and what was fitted or kept."}),
                [](const std::string& f) { calibration::load_fabric_profile(f); });
}

}  // namespace podsim::fit
