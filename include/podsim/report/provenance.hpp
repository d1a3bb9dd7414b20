// Where a result came from, recorded in result.json: which podsim, started how, on which input files
// (with their SHA-256, so a result can be matched to the exact files) and when.
#pragma once

#include <string>
#include <vector>

namespace podsim::report {

struct InputFile {
  std::string role;  // topology | workload | device_profile | fabric_profile
  std::string path;
  std::string sha256;
};

struct Provenance {
  std::string podsim_version;
  std::vector<std::string> command_line;  // argv as main() received it; empty when not run from the CLI
  std::vector<std::string> sets;          // every --set, in order
  std::vector<InputFile> inputs;
  std::string time_utc;  // ISO 8601, e.g. 2026-12-03T09:08:40Z
};

}  // namespace podsim::report
