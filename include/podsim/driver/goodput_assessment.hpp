// `podsim run --goodput`: the simulated step time against the failures of the hardware the job occupies
// and the cost of checkpointing its state, as the expected fraction of wall time on useful steps and the
// expected time to train a number of tokens.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "podsim/driver/simulation.hpp"
#include "podsim/reliability/goodput_assessment.hpp"
#include "podsim/reliability/reliability_profile.hpp"
#include "podsim/report/run_result.hpp"
#include "podsim/topology/topology.hpp"

namespace podsim::driver {

using reliability::ComponentShare;
using reliability::GoodputAssessment;

// Which units of each kind the job's devices use: its GPUs, their hosts, and the NICs, fabric switches
// and scale-out links of the topology in proportion to the share of its devices the job occupies.
std::vector<std::pair<reliability::FailureUnit, double>> job_component_units(const topology::Topology& topo,
                                                                             int job_devices);

// InputError when the run did not simulate (nothing to assess) or its kind gives no checkpoint size and
// the profile has no checkpoint.bytes.
GoodputAssessment assess_goodput(const report::RunResult& run, const topology::Topology& topo,
                                 const reliability::ReliabilityProfile& profile);

// The same for a run of `request` (its topology loaded again with the request's topology overrides).
GoodputAssessment assess_goodput(const RunRequest& request, const report::RunResult& run,
                                 const reliability::ReliabilityProfile& profile);

// --set assignments that start with goodput. (returned without the prefix) are taken out of `sets`.
Overrides take_goodput_sets(std::vector<std::string>& sets);

}  // namespace podsim::driver
