#include "podsim/driver/provenance.hpp"

#include "podsim/core/sha256.hpp"
#include "podsim/core/version.hpp"

namespace podsim::driver {

report::Provenance run_provenance(const RunRequest& request, const topology::Topology& topo) {
  report::Provenance p;
  p.podsim_version = version();
  p.command_line = command_line();
  p.sets = request.sets;
  auto add = [&](const std::string& role, const std::string& path) {
    if (!path.empty()) p.inputs.push_back({role, path, file_sha256(path)});
  };
  add("topology", request.topology_file);
  add("workload", request.workload_file);
  add("device_profile", topo.device.profile_path);
  add("fabric_profile", topo.fabric_profile_path);
  p.time_utc = utc_timestamp();
  return p;
}

}  // namespace podsim::driver
