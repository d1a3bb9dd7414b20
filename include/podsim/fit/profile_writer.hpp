// Profile YAML as podsim reads it (load_device_profile / load_fabric_profile), written by the calibrate
// commands. Every value is followed by nothing but what the loader accepts, and the result is checked by
// loading it back before it reaches a file.
#pragma once

#include <string>
#include <vector>

#include "podsim/calibration/device_profile.hpp"
#include "podsim/calibration/fabric_profile.hpp"

namespace podsim::calibration {

// `comments` become '#' lines at the top (what the file is, how it was made).
std::string device_profile_yaml(const DeviceProfile& p, const std::vector<std::string>& comments);
std::string fabric_profile_yaml(const FabricProfile& p, const std::vector<std::string>& comments);

// A YAML double-quoted scalar.
std::string yaml_quote(const std::string& text);

}  // namespace podsim::calibration
