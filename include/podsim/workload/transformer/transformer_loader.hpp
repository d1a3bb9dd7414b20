// YAML workload file -> WorkloadConfig, with `--set workload.KEY=VALUE` overrides applied first.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "podsim/core/config_node.hpp"
#include "podsim/topology/topology.hpp"
#include "podsim/workload/transformer/transformer_config.hpp"

namespace podsim::workload {

using podsim::Overrides;  // (dotted path, value), defined in core/config_node.hpp

// The transformer_lm configuration of a workload file (for tools and tests; `podsim run` goes through
// load_workload_model in workload_model.hpp, which handles every kind).
WorkloadConfig load_workload(const std::string& path, const Overrides& overrides,
                             const topology::Topology& topo);

// The transformer_lm configuration in `root` (overrides already applied) as it runs on `topo`: read and
// checked, the precision checked against the device, `training.attention: auto` resolved for it, and
// overrides that leave a derived model key inconsistent warned about. Both load_workload and the
// registry's factory (make_megatron_model) read through here.
WorkloadConfig read_transformer_on(const ConfigNode& root, const std::string& file,
                                   const topology::Topology& topo);

// (micro_batch, virtual_stages) settings to try when the workload says `auto`, in a fixed order. A fixed
// setting contributes just itself. Settings that violate a divisibility rule are left out.
std::vector<std::pair<int, int>> candidate_settings(const WorkloadConfig& w);

}  // namespace podsim::workload
