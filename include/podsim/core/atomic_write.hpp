// Writing a file so that an interrupted run never leaves one that looks complete: to a temporary name
// next to it, then renamed into place. Every output podsim writes (run results, sweep tables, reports,
// calibration profiles) goes through it.
#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace podsim {

// Throws InputError naming the path (a directory, an unwritable folder, a full disk) and leaves no
// temporary file behind.
void atomic_write(const std::string& path, const std::string& content);

// The same for content too large to hold in memory at once: `write` streams it to the temporary file.
void atomic_write(const std::string& path, const std::function<void(std::ostream&)>& write);

}  // namespace podsim
