// Putting files where the user asked. A path podsim cannot write (a read-only --out, a --trace that names
// a directory, a full disk) is the user's to fix, not a bug: every failure here is an InputError (exit
// status 2) naming the path, the option that gave it and what is wrong.
#pragma once

#include <string>

#include "podsim/core/atomic_write.hpp"

namespace podsim::report {

// Creates `dir` and its parents when missing and checks that files can be created in it, before a long
// simulation whose results would otherwise be lost. `flag` is the option that named it ("--out").
void prepare_output_directory(const std::string& dir, const std::string& flag);

// Checks that `path` can be written as a file: it is not a directory, and its folder exists (or is
// created) and is writable. `flag` is the option that named it ("--trace").
void prepare_output_file(const std::string& path, const std::string& flag);

// The write-then-rename every output uses (core/atomic_write.hpp), under its long-standing name here.
using podsim::atomic_write;

}  // namespace podsim::report
