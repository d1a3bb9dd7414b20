// Subcommands of the podsim executable. Each registers itself on the CLI11 app.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace podsim::cli {

void add_run_command(CLI::App& app);
void add_topo_command(CLI::App& app);
void add_collective_command(CLI::App& app);
void add_validate_command(CLI::App& app);
void add_sweep_command(CLI::App& app);  // sweep and merge
void add_plan_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);

// A file shipped with podsim (validation tables, presets), found relative to the working directory or to
// the podsim executable, so commands work from the repository root and from the build directory.
std::string find_project_file(const std::string& relative);

}  // namespace podsim::cli
