// `podsim merge DIR...`, registered by add_sweep_command (commands.hpp).
#pragma once

namespace CLI {
class App;
}

namespace podsim::cli {

void add_merge_command(CLI::App& app);

}  // namespace podsim::cli
