#include "podsim/cli/exit_status.hpp"

#include <fmt/format.h>

#include "podsim/core/error.hpp"

namespace podsim::cli {

int report_failure(const std::exception& e, std::FILE* err) {
  if (dynamic_cast<const InputError*>(&e)) {
    fmt::print(err, "podsim: error: {}\n", e.what());
    return 2;
  }
  // A physically impossible result is a bug as well, but the message says which rule it broke.
  const char* kind = dynamic_cast<const InvariantViolation*>(&e)
                         ? "internal error: result breaks an invariant"
                         : "internal error";
  fmt::print(err, "podsim: {}: {}\n(this is a bug in podsim; please report it with the command line)\n", kind,
             e.what());
  return 1;
}

}  // namespace podsim::cli
