#include "podsim/cli/unknown_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "podsim/core/version.hpp"

namespace podsim::cli {
namespace {

// Edit distance, for "did you mean": a typo of a command is one or two edits away.
size_t distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  return names;
}

}  // namespace

std::string command_list(const CLI::App& app) {
  std::string list;
  for (const auto& name : command_names(app)) list += (list.empty() ? "" : ", ") + name;
  return list;
}

std::optional<std::string> unknown_command_message(const CLI::App& app, const CLI::ParseError& e) {
  if (e.get_name() != "RequiredError" && e.get_name() != "ExtrasError") return std::nullopt;
  // The command group the error belongs to: the deepest parsed one (podsim, or podsim topo, ...).
  const CLI::App* group = &app;
  std::string path = app.get_name();
  for (bool deeper = true; deeper;) {
    deeper = false;
    for (const CLI::App* sub : group->get_subcommands())
      if (sub->parsed()) {
        group = sub, path += " " + sub->get_name(), deeper = true;
        break;
      }
  }
  if (group->get_require_subcommand_min() == 0 || !group->get_subcommands().empty()) return std::nullopt;
  std::vector<std::string> rest = group->remaining();
  std::string commands = command_list(*group);
  std::string help = fmt::format("run '{} --help' for what each does", path);
  if (rest.empty()) return fmt::format("'{}' needs a command: {}; {}", path, commands, help);
  if (!rest.front().empty() && rest.front()[0] == '-')
    return fmt::format("unknown option '{}'; '{}' takes a command first: {}; {}", rest.front(), path,
                       commands, help);
  std::string hint;
  for (const auto& name : command_names(*group))
    if (distance(rest.front(), name) <= 2 && hint.empty()) hint = fmt::format(" (did you mean '{}'?)", name);
  std::string prefix = group == &app ? "" : path.substr(app.get_name().size() + 1) + " ";
  return fmt::format("unknown {}command '{}'{}; {}commands: {}; {}", prefix, rest.front(), hint, prefix,
                     commands, help);
}

void add_version_command(CLI::App& app) {
  app.add_subcommand("version", "Print podsim's version (the same as podsim --version)")->callback([] {
    fmt::print("{}\n", version());
  });
}

}  // namespace podsim::cli
