// result.json's provenance of a run (report/provenance.hpp): this podsim's version, the command line,
// the --set list and the SHA-256 of every file the run read.
#pragma once

#include "podsim/driver/simulation.hpp"
#include "podsim/report/provenance.hpp"
#include "podsim/topology/topology.hpp"

namespace podsim::driver {

report::Provenance run_provenance(const RunRequest& request, const topology::Topology& topo);

// The files a simulation of this workload on this topology reads, each with its SHA-256: the topology, the
// workload and the device and fabric profiles the topology names (the empty paths left out).
std::vector<report::InputFile> input_files(const std::string& topology_file, const std::string& workload_file,
                                           const topology::Topology& topo);

}  // namespace podsim::driver
