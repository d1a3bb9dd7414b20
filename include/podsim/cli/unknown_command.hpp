// What to say when the command line names no command or one podsim does not have: CLI11's own texts
// ("A subcommand is required", "The following arguments were not expected") do not say what exists.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace podsim::cli {

// "unknown command 'simulate'; commands: run, topo, ..." (with "did you mean" for a near miss) when `e`
// is the parse error of a missing or unknown command of `app` or of one of its command groups (topo,
// calibrate); nothing for every other error, which CLI11 reports itself.
std::optional<std::string> unknown_command_message(const CLI::App& app, const CLI::ParseError& e);

// "run, topo, collective, ...": the commands of `app`, in the order --help lists them.
std::string command_list(const CLI::App& app);

// `podsim version`: prints the same text as `podsim --version`.
void add_version_command(CLI::App& app);

}  // namespace podsim::cli

namespace podsim::cli {

// Appends "Examples:" with real command lines to the --help of each command (examples.cpp).
void add_examples(CLI::App& app);

}  // namespace podsim::cli
