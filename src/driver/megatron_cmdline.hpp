// A Megatron-LM launch command line split into the launcher, the training script and its --arguments,
// and which Megatron-LM arguments do not change the cost of a step. Private to the driver
// (megatron_args.cpp maps the arguments to podsim keys).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace podsim::driver {

struct MegatronCommandLine {
  std::vector<std::string> launcher;  // words before the training script (torchrun, srun, VAR=value, ...)
  std::string script;                 // pretrain_gpt.py, ...; "" when the text holds arguments only
  std::vector<std::pair<std::string, std::optional<std::string>>> args;  // name without "--", value
  std::vector<std::string> stray;  // words that are neither an --option nor its value
};

// Shell-like words: backslash-newline joins lines, '...' and "..." quote, '#' starts a comment; the
// first word ending in ".py" is the script. `--name=value`, `--name value` and `--name` (a flag: the next
// word starts with "--" or there is none) are arguments. InputError on an unterminated quote.
MegatronCommandLine parse_megatron_command_line(const std::string& text);

enum class MegatronArgKind {
  unknown,       // not in podsim's lists: listed as not understood
  ignored,       // a real Megatron-LM argument that does not change a step's time or memory
  not_modelled,  // a real Megatron-LM argument that changes it, which podsim does not model
};
MegatronArgKind classify_megatron_arg(const std::string& name);

}  // namespace podsim::driver
