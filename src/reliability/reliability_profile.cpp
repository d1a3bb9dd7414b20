#include "podsim/reliability/reliability_profile.hpp"

#include <fmt/format.h>

#include "podsim/core/error.hpp"

namespace podsim::reliability {

const char* to_string(FailureUnit u) {
  switch (u) {
    case FailureUnit::gpu: return "gpu";
    case FailureUnit::host: return "host";
    case FailureUnit::nic: return "nic";
    case FailureUnit::switch_: return "switch";
    case FailureUnit::link: return "link";
  }
  return "?";
}

namespace {

constexpr double kGB = 1e9;

FailureUnit read_unit(const ConfigNode& c) {
  std::string u = c.choice("per", {"gpu", "host", "nic", "switch", "link"});
  if (u == "gpu") return FailureUnit::gpu;
  if (u == "host") return FailureUnit::host;
  if (u == "nic") return FailureUnit::nic;
  if (u == "switch") return FailureUnit::switch_;
  return FailureUnit::link;
}

std::vector<ComponentFailures> read_failures(const ConfigNode& root) {
  ConfigNode section = root.child("failures");
  std::vector<ComponentFailures> out;
  for (const std::string& key : section.keys()) {
    ConfigNode c = section.child(key);
    ComponentFailures f;
    f.name = key;
    f.per = read_unit(c);
    f.mtbf_hours = c.positive("mtbf_hours");
    f.source = c.string("source");  // every rate says where it came from
    c.reject_unknown_keys();
    out.push_back(f);
  }
  if (out.empty())
    section.fail("", "needs at least one component, e.g. gpu: {per: gpu, mtbf_hours: 80000, source: ...}");
  return out;
}

void read_checkpoint(const ConfigNode& root, ReliabilityProfile& p) {
  ConfigNode c = root.child("checkpoint");
  p.storage_write_bytes_per_s = c.positive("storage_write_GBps") * kGB;
  p.storage_read_bytes_per_s = c.positive_or("storage_read_GBps", p.storage_write_bytes_per_s / kGB) * kGB;
  p.node_write_bytes_per_s = c.non_negative_or("node_write_GBps", 0) * kGB;
  p.async_checkpoint = c.boolean_or("async", false);
  p.snapshot_bytes_per_s = c.positive_or("snapshot_GBps", 25) * kGB;
  if (c.has("interval_minutes")) {
    std::string v = c.at("interval_minutes").as_string();
    p.interval_minutes = v == "auto" ? 0 : c.positive("interval_minutes");
  }
  p.checkpoint_bytes_override = c.non_negative_or("bytes", 0);
  c.reject_unknown_keys();
}

}  // namespace

ReliabilityProfile load_reliability_profile(const std::string& file, const Overrides& overrides) {
  ConfigNode root = ConfigNode::load_file(file);
  for (const auto& [path, value] : overrides) root.apply_override(path, value, "--set goodput." + path + "=" + value);
  ReliabilityProfile p;
  p.file = file;
  p.name = read_document_name(root);
  p.failures = read_failures(root);
  read_checkpoint(root, p);
  p.restart_seconds = root.non_negative_or("restart_minutes", 10) * 60;
  p.train_tokens = root.non_negative_or("train_tokens", 0);
  p.seed = static_cast<unsigned long long>(root.integer_in_or("seed", 0, 1LL << 40, 1));
  p.monte_carlo_trials = static_cast<int>(root.integer_in_or("monte_carlo_trials", 1, 100000, 200));
  root.reject_unknown_keys();
  return p;
}

}  // namespace podsim::reliability
