#include "podsim/driver/provenance.hpp"

#include "podsim/core/sha256.hpp"
#include "podsim/core/version.hpp"

namespace podsim::driver {

report::Provenance run_provenance(const RunRequest& request, const topology::Topology& topo) {
  report::Provenance p;
  p.podsim_version = version();
  p.command_line = command_line();
  p.sets = request.sets;
  p.inputs = input_files(request.topology_file, request.workload_file, topo);
  p.time_utc = utc_timestamp();
  return p;
}

std::vector<report::InputFile> input_files(const std::string& topology_file, const std::string& workload_file,
                                           const topology::Topology& topo) {
  std::vector<report::InputFile> inputs;
  auto add = [&](const std::string& role, const std::string& path) {
    if (!path.empty()) inputs.push_back({role, path, file_sha256(path)});
  };
  add("topology", topology_file);
  add("workload", workload_file);
  add("device_profile", topo.device.profile_path);
  add("fabric_profile", topo.fabric_profile_path);
  return inputs;
}

}  // namespace podsim::driver
