// How an error that reaches main becomes podsim's message and exit status (the contract in README.md):
//   InputError          -> "podsim: error: MESSAGE", status 2 (bad input the user can fix)
//   InvariantViolation  -> "podsim: internal error: result breaks an invariant: MESSAGE", status 1
//   other std::exception -> "podsim: internal error: MESSAGE", status 1
// Internal errors ask for a bug report.
#pragma once

#include <cstdio>
#include <exception>

namespace podsim::cli {

// Writes the message for `e` to `err` and returns the exit status.
int report_failure(const std::exception& e, std::FILE* err);

}  // namespace podsim::cli
