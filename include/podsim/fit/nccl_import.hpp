// `podsim calibrate nccl-tests` as library functions: nccl-tests logs measured on a topology -> a fabric
// profile with provenance, the report the command prints, and the checked profile file. Each log is
// interpreted through podsim's own plan of the same collective on that topology (collective_geometry.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "podsim/fit/fabric_fit.hpp"
#include "podsim/fit/nccl_tests_log.hpp"

namespace podsim::fit {

struct NcclImportRequest {
  std::vector<std::string> logs;  // nccl-tests output files (or calib-nccl CSVs)
  std::string topology;           // the machine the logs were measured on
  std::vector<std::pair<std::string, std::string>> topology_sets;  // overrides of the topology's keys
  std::string name;  // profile name; "" = from the logs' GPUs and hosts
  std::string op;    // collective, when neither a log nor its file name says
  std::string base;  // profile kept for what the logs do not measure; "" = the topology's
};

struct NcclImport {
  NcclImport() = default;
  // fit.collectives point into `tests`: a copy would point into the original, so only moves are allowed
  // (a moved vector keeps its elements where they are).
  NcclImport(const NcclImport&) = delete;
  NcclImport& operator=(const NcclImport&) = delete;
  NcclImport(NcclImport&&) = default;
  NcclImport& operator=(NcclImport&&) = default;

  NcclImportRequest request;
  std::string topology_name;
  std::vector<calibration::NcclTestsLog> tests;  // one per test found in the logs
  calibration::FabricFitResult fit;              // fit.profile has its provenance
  // Where a log's GPUs or hosts do not match the topology it is fitted to (fewer GPUs per host than a
  // server has, fewer hosts than the topology's, another GPU model): the fit still runs, on the first
  // hosts and GPUs of the topology, and says so.
  std::vector<std::string> warnings;
};

// The warnings above for one log on one topology (empty when they match).
std::vector<std::string> log_topology_mismatch(const calibration::NcclTestsLog& log,
                                               const std::string& topology_name, int topology_nodes,
                                               int devices_per_node, const std::string& device);
// The same for every test read, once per file and warning (the first test's line, and how many more of the
// file repeat it): what NcclImport::warnings holds.
std::vector<std::string> logs_topology_mismatch(const std::vector<calibration::NcclTestsLog>& logs,
                                                const std::string& topology_name, int topology_nodes,
                                                int devices_per_node, const std::string& device);

// Reads the logs and the topology and fits. Throws InputError on bad input (unreadable or malformed log,
// a log whose ranks do not fit the topology, a log podsim cannot use).
NcclImport import_nccl_tests(const NcclImportRequest& request);

// What `podsim calibrate nccl-tests` prints: per test the bounding link class, ideal and peak busbw,
// efficiency, latency and podsim's error; the same per size range; the fitted profile values.
std::string nccl_import_report(const NcclImport& import);

// Writes the profile to `path` once podsim's own loader accepts it.
void write_fabric_profile(const std::string& path, const NcclImport& import);

}  // namespace podsim::fit
