// What podsim this is and how it was started: for `podsim --version` and result.json's provenance.
#pragma once

#include <string>
#include <vector>

namespace podsim {

// "0.1.0 (git e54b071-dirty)": CMake's project() version and `git describe --always --dirty` taken when
// the build was configured; the project version alone when the source was not a git checkout.
const std::string& version();

// The process's command line, as main() received it (empty until record_command_line is called).
void record_command_line(int argc, const char* const* argv);
const std::vector<std::string>& command_line();

// The current time in UTC, ISO 8601 to the second ("2026-12-03T09:08:40Z"). SOURCE_DATE_EPOCH (the
// reproducible-builds convention), when set to an integer, replaces the clock so outputs can be compared.
std::string utc_timestamp();

}  // namespace podsim
