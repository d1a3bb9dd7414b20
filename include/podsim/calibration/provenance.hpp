// Where a calibrated number came from. Every profile entry carries one: a measurement (command, machine,
// date) or a publication (paper, table), and whether it was measured or only derived from published data.
#pragma once

#include <string>
#include <vector>

namespace podsim {
class ConfigNode;
}

namespace podsim::calibration {

struct Provenance {
  std::string kind;    // "measured", "published", "derived", "prior"
  std::string source;  // command + machine, or citation
  std::string note;
};

// Reads `provenance:` (a mapping or a list of mappings) from a profile node.
std::vector<Provenance> read_provenance(const ConfigNode& node);

}  // namespace podsim::calibration
