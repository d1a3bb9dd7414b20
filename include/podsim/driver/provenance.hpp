// result.json's provenance of a run (report/provenance.hpp): this podsim's version, the command line,
// the --set list and the SHA-256 of every file the run read.
#pragma once

#include "podsim/driver/simulation.hpp"
#include "podsim/report/provenance.hpp"
#include "podsim/topology/topology.hpp"

namespace podsim::driver {

report::Provenance run_provenance(const RunRequest& request, const topology::Topology& topo);

}  // namespace podsim::driver
