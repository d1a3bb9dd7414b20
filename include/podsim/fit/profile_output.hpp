// What the calibrate commands share when they turn a fit into a profile file: the date and command line
// that go into provenance, and a write that replaces the file only once podsim loads the new profile back.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace podsim::fit {

// Today's date in UTC, YYYY-MM-DD (provenance says when a profile was fitted).
std::string today_utc();

// The command as a user would retype it (for provenance): the subcommand, its inputs and its options.
// Empty words are left out.
std::string command_line(const std::string& subcommand, const std::vector<std::string>& words);

// Writes `yaml` to `path` (creating its directory) only after `load` accepted it from a side file, so
// that a profile podsim cannot read never replaces a good one. Whatever `load` throws propagates.
void write_checked(const std::string& path, const std::string& yaml,
                   const std::function<void(const std::string&)>& load);

}  // namespace podsim::fit
