#include "podsim/report/output_files.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "podsim/core/error.hpp"
#include "podsim/core/text_input.hpp"

namespace fs = std::filesystem;

namespace podsim::report {
namespace {

std::string reason(const std::error_code& ec) {
  return ec ? ec.message() : std::string("unknown error");
}

// `dir` exists as a directory podsim may create files in; `what` names it in the message.
void require_writable_directory(const fs::path& dir, const std::string& what) {
  std::error_code ec;
  fs::file_status st = fs::status(dir, ec);
  if (st.type() == fs::file_type::not_found) {
    fs::create_directories(dir, ec);
    if (ec) throw InputError(fmt::format("{}: cannot create the directory: {}", what, reason(ec)));
    return;
  }
  if (st.type() != fs::file_type::directory)
    throw InputError(fmt::format("{}: exists and is not a directory", what));
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw InputError(fmt::format("{}: cannot write files in this directory: {}", what, std::strerror(errno)));
}

}  // namespace

void prepare_output_directory(const std::string& dir, const std::string& flag) {
  if (dir.empty()) throw InputError(fmt::format("{}: the directory name is empty", flag));
  require_writable_directory(dir, fmt::format("{} {}", flag, printable(dir)));
}

void prepare_output_file(const std::string& path, const std::string& flag) {
  std::string what = fmt::format("{} {}", flag, printable(path));
  if (path.empty()) throw InputError(fmt::format("{}: the file name is empty", flag));
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw InputError(
        fmt::format("{}: is a directory; give a file name, e.g. {}/trace.json", what, printable(path)));
  fs::path parent = fs::path(path).parent_path();
  require_writable_directory(parent.empty() ? fs::path(".") : parent,
                             fmt::format("{} (its directory {})", what, printable(parent.string())));
  if (fs::exists(path, ec) && ::access(path.c_str(), W_OK) != 0)
    throw InputError(fmt::format("{}: the file cannot be replaced: {}", what, std::strerror(errno)));
}

}  // namespace podsim::report
